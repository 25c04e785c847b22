"""agent-memory-client hook EVENT | mcp [--tools agent]: the client half's commands (the
server's own are `agent-memory`'s)."""

from __future__ import annotations

import argparse
import os
import sys

from agent_memory_client.hooks import HANDLERS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agent-memory-client", description=__doc__)
    parser.add_argument("--url", help="the server (default: AGENT_MEMORY_URL or 127.0.0.1:8080)")
    commands = parser.add_subparsers(dest="command", required=True)
    hook = commands.add_parser("hook", help="a Claude Code hook: its JSON on stdin")
    hook.add_argument("event", choices=list(HANDLERS))
    mcp = commands.add_parser("mcp", help="MCP over stdio, bridged to the server's /mcp")
    surface = "agent: for a client whose hooks own sessions (no session, pruning, stats tools)"
    mcp.add_argument("--tools", choices=["agent"], help=surface)
    args = parser.parse_args(argv)
    if args.command == "hook":
        from agent_memory_client.hooks import run_hook

        out, note = run_hook(args.event, sys.stdin.read(), args.url)
        if out:
            print(out)
        print(note, file=sys.stderr)
        return 0
    from agent_memory_client.bridge import bridge

    return bridge(sys.stdin.buffer, sys.stdout.buffer, os.getcwd(), args.url, tools=args.tools)


if __name__ == "__main__":
    sys.exit(main())
