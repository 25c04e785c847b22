"""agent-memory: long-term memory for coding agents. Run the service (serve, migrate, mcp),
use it (remember, search, list, show, export, import, audit), review what past sessions
taught and what was already written for agents (onboard, import-history, import-files,
drafts), hand it to agents that only read files (render), tidy it (tidy), inspect it
(explain-search), manage its keys and people, and place a tenant on a Citus cluster
(isolate-tenant).

One module per command group: `service` works on this machine's database in this process;
`memories`, `review`, `audit`, `sessions`, `drafts`, `tidy`, `render`, `transfer` and the
imports talk to a running server through the typed client (app/client.py, their one HTTP
transport); `keys`, `people` and `cluster` work on the database as its owner. An expected
failure is one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app import __version__
from app.cli import (
    audit,
    cluster,
    drafts,
    files,
    history,
    keys,
    memories,
    people,
    render,
    review,
    service,
    sessions,
    tidy,
    transfer,
)
from app.cli.common import HELP, CommandError, Parents
from app.client import ClientError, error_line
from app.config import Settings
from app.logging import configure_logging

GROUPS = (
    service, memories, review, audit, sessions, history, files, drafts, render, tidy, transfer,
    keys, people, cluster,
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    summary = (__doc__ or "").split("\n\n")[0]
    parser = argparse.ArgumentParser(prog="agent-memory", description=summary, formatter_class=HELP)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, parents: list[argparse.ArgumentParser]) -> Any:
        return sub.add_parser(
            name, help=help, description=help, parents=parents, formatter_class=HELP
        )

    parents = Parents()
    for group in GROUPS:
        group.register(command, parents)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.func.__module__ in (service.__name__, keys.__name__, people.__name__, cluster.__name__):
        # The service's commands log; a client command prints its answer, nothing else.
        settings = Settings()
        quiet = getattr(args, "quiet_logs", False) and not getattr(args, "verbose", False)
        configure_logging("WARNING" if quiet else settings.log_level, settings.log_format)
    try:
        result: int = args.func(args)
    except ClientError as exc:
        print(f"agent-memory {args.command}: {error_line(exc)}", file=sys.stderr)
        return 2 if exc.status == 0 else 1
    except CommandError as exc:
        message = str(exc)
        if not message.startswith("agent-memory"):
            message = f"agent-memory {args.command}: {message}"
        print(message, file=sys.stderr)
        return exc.code
    return result
