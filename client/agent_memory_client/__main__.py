"""agent-memory-client: the client half's commands (the server's own are `agent-memory`'s).

agent-memory-client hook [--client CLIENT] EVENT      # a hook: its JSON on stdin
agent-memory-client mcp [--tools agent]               # MCP over stdio, bridged
agent-memory-client install|uninstall CLIENT [--project DIR | --user]
"""

from __future__ import annotations

import os
import sys


def hook_arguments(argv: list[str]) -> tuple[str, str] | None:
    """(client, event) of `hook [--client CLIENT] EVENT`, read without argparse (whose import
    a hook would pay on every prompt); None for any other form (argparse then reads it)."""
    if len(argv) == 2 and argv[0] == "hook" and not argv[1].startswith("-"):
        from agent_memory_client.clients import DEFAULT_CLIENT

        return DEFAULT_CLIENT, argv[1]
    if len(argv) == 4 and argv[:2] == ["hook", "--client"] and not argv[3].startswith("-"):
        return argv[2], argv[3]
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from agent_memory_client.clients import CLIENTS, DEFAULT_CLIENT

    fast = hook_arguments(argv)
    if fast is not None and fast[0] in CLIENTS:
        return run_hook_command(*fast, url=None)
    import argparse

    parser = argparse.ArgumentParser(
        prog="agent-memory-client",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", help="the server (default: AGENT_MEMORY_URL or 127.0.0.1:8080)")
    commands = parser.add_subparsers(dest="command", required=True)
    hook = commands.add_parser("hook", help="a client's hook: its JSON on stdin")
    hook.add_argument("--client", choices=list(CLIENTS), default=DEFAULT_CLIENT)
    hook.add_argument("event", help="the hook's event, as the client's configuration names it")
    mcp = commands.add_parser("mcp", help="MCP over stdio, bridged to the server's /mcp")
    surface = "agent: for a client whose hooks own sessions (no session, pruning, stats tools)"
    mcp.add_argument("--tools", choices=["agent"], help=surface)
    for name, verb in (("install", "writes"), ("uninstall", "removes exactly what install wrote")):
        command = commands.add_parser(name, help=f"{verb} a client's hooks and MCP server")
        command.add_argument("client", choices=list(CLIENTS))
        where = command.add_mutually_exclusive_group()
        where.add_argument("--project", metavar="DIR", help="in this repository's configuration")
        where.add_argument("--user", action="store_true", help="for every project (the default)")
    args = parser.parse_args(argv)
    if args.command == "hook":
        return run_hook_command(args.client, args.event, args.url)
    if args.command in ("install", "uninstall"):
        from agent_memory_client.install import InstallError, install, uninstall

        act = install if args.command == "install" else uninstall
        try:
            for line in act(args.client, project=args.project):
                print(line)
        except InstallError as exc:
            print(f"agent-memory-client {args.command}: {exc}", file=sys.stderr)
            return 1
        return 0
    from agent_memory_client.bridge import bridge

    return bridge(sys.stdin.buffer, sys.stdout.buffer, os.getcwd(), args.url, tools=args.tools)


def run_hook_command(client: str, event: str, url: str | None) -> int:
    """Exit 0 whatever happens: a hook that fails must not fail the agent's turn."""
    from agent_memory_client.hooks import run_hook

    try:
        out, note = run_hook(client, event, sys.stdin.read(), url)
    except Exception as exc:  # a fault of ours, said in one line, never the agent's
        out, note = "", f"agent-memory hook {event}: failed ({type(exc).__name__}: {exc})"
    if out:
        print(out)
    print(note, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
