"""Sessions through a running server: `agent-memory sessions` (recent ones, or one ended or
deleted), and `agent-memory hook`, Claude Code's hook as the client half runs it."""

from __future__ import annotations

import argparse
import json
import sys

from app.cli.common import (
    Adder,
    CommandError,
    Parents,
    api_key_of,
    client_of,
    limit_of,
    say,
    session_id,
)
from app.domain.sessions import MAX_SESSION_PAGE, SESSION_STATUSES


def register(command: Adder, parents: Parents) -> None:
    client, shown = parents.client, parents.shown
    sessions = command("sessions", "recent sessions, or end or delete one", [client, shown])
    sessions.add_argument(
        "action", nargs="?", choices=["list", "end", "delete"], default="list", help="what to do"
    )
    sessions.add_argument("session_id", nargs="?", help="the session (end, delete)")
    sessions.add_argument("--source-repo", dest="source_repo", help="only this repository's")
    sessions.add_argument(
        "--limit", type=int, default=20, help=f"at most this many (1 to {MAX_SESSION_PAGE})"
    )
    sessions.add_argument(
        "--status",
        choices=SESSION_STATUSES,
        default="completed",
        help="how it ended (end)",
    )
    sessions.add_argument("--summary", help="what was done (end)")
    sessions.set_defaults(func=cmd_sessions, max_limit=MAX_SESSION_PAGE)

    hook = command("hook", "a Claude Code hook (JSON on stdin); never fails the agent", [client])
    hook.add_argument(
        "event", choices=["session-start", "stop", "session-end"], help="the hook event"
    )
    hook.set_defaults(func=cmd_hook)


def cmd_sessions(args: argparse.Namespace) -> int:
    if args.action != "list" and not args.session_id:
        raise CommandError(f"agent-memory sessions {args.action}: which session? (its id)")
    with client_of(args) as memory:
        if args.action == "end":
            answer = memory.end_session(
                session_id(args.session_id), args.status, summary=args.summary
            )
        elif args.action == "delete":
            memory.delete_session(session_id(args.session_id))
            print(f"deleted session {args.session_id}")
            return 0
        else:
            answer = memory.sessions(source_repo=args.source_repo, limit=limit_of(args))
    if args.json or args.action == "end":
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    for item in answer:
        what = " · ".join(p for p in (item.get("agent"), item.get("task")) if p)
        print(
            f"{item['started_at'][:16]}  {item['id']}  {item['status']:9}"
            f"  {item.get('source_repo') or '-'}  {what}"
        )
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    """A Claude Code hook: its JSON on stdin, its answer on stdout; always exit 0."""
    from agent_memory_client.hooks import run_hook

    out, note = run_hook("claude-code", args.event, sys.stdin.read(), args.url, api_key_of(args))
    if out:
        print(out)
    say(note)
    return 0
