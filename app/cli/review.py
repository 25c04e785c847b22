"""`agent-memory review`, through a running server: the memories held for a person's
review, with why and the sources their sessions read, or a person's approval of one."""

from __future__ import annotations

import argparse
import json

from app.cli.common import Adder, CommandError, Parents, client_of, memory_id, say
from app.cli.memory_lines import print_memory_line


def register(command: Adder, parents: Parents) -> None:
    client, shown = parents.client, parents.shown
    review = command(
        "review",
        "the memories held for a person's review, with their sources, or approve one (admin key)",
        [client, shown],
    )
    review.add_argument(
        "action", nargs="?", choices=["list", "approve"], default="list", help="what to do"
    )
    review.add_argument("memory_id", nargs="?", help="the memory to approve")
    review.set_defaults(func=cmd_review)


def cmd_review(args: argparse.Namespace) -> int:
    """What waits for a person (app/domain/provenance.py), or a person's approval of one:
    handed over unasked to every later session from then on."""
    if args.action == "approve":
        if not args.memory_id:
            raise CommandError("agent-memory review approve: which memory? (its id)")
        with client_of(args) as memory:
            approved = memory.approve(memory_id(args.memory_id))
        print(f"approved {approved['id']}: handed over unasked from now on")
        return 0
    with client_of(args) as memory:
        held = memory.held()
    if args.json:
        print(json.dumps(held, indent=2, ensure_ascii=False))
        return 0
    for item in held:
        print_memory_line(item)
        provenance = item.get("provenance") or {}
        for reason in provenance.get("reasons") or []:
            print(f"    why: {reason}")
        for source in provenance.get("sources") or []:
            # Shown as data: quoted, so that no source can pose as this listing's lines.
            print(f"    read: {json.dumps(source, ensure_ascii=False)}")
    if not held:
        say("nothing waits for review")
    return 0
