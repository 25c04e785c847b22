"""`agent-memory audit`, through a running server: the tenant's audit trail, newest first,
or one entry undone (admin key)."""

from __future__ import annotations

import argparse
import json

from app.cli.common import Adder, Parents, client_of, limit_of
from app.domain.audit import MAX_AUDIT_PAGE


def register(command: Adder, parents: Parents) -> None:
    client, shown = parents.client, parents.shown
    audit = command(
        "audit", "the audit trail, newest first, or --undo (admin key)", [client, shown]
    )
    audit.add_argument("--memory", help="only entries about this memory id")
    audit.add_argument("--action", help="only this action (edit, prune, undo, ...)")
    audit.add_argument("--since", help="only entries from this time on (2026-11-01, 7d, ...)")
    audit.add_argument(
        "--limit", type=int, default=50, help=f"at most this many (1 to {MAX_AUDIT_PAGE})"
    )
    audit.add_argument("--undo", metavar="ENTRY_ID", help="undo this entry instead of listing")
    audit.set_defaults(func=cmd_audit, max_limit=MAX_AUDIT_PAGE)


def cmd_audit(args: argparse.Namespace) -> int:
    """The tenant's audit trail, newest first; or undo one entry (admin key)."""
    with client_of(args) as memory:
        if args.undo:
            answer = memory.undo(args.undo)
        else:
            answer = memory.audit(
                memory_id=args.memory, action=args.action, since=args.since, limit=limit_of(args)
            )
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    if args.undo:
        restored = ", ".join(m["id"] for m in answer["memories"])
        print(f"undone: {args.undo} (entry {answer['undo']['id']}; restored {restored})")
        return 0
    for entry in answer:
        who = entry["actor_key"] or "open/service"
        targets = ",".join(entry["memory_ids"][:3])
        more = f" +{len(entry['memory_ids']) - 3}" if len(entry["memory_ids"]) > 3 else ""
        undone = f" (undone by {entry['undone_by']})" if entry["undone_by"] else ""
        print(
            f"{entry['at'][:19]}  {entry['id']}  {entry['action']:10} {entry['actor_role']:6}"
            f" {who}  {targets}{more}{undone}"
        )
    return 0
