"""`agent-memory tidy`, through a running server: the tidy proposals (merge, replace,
retire), computed again on request, each accepted, dismissed or undone (admin key)."""

from __future__ import annotations

import argparse
import json

from app.cli.common import Adder, CommandError, Parents, client_of, say
from app.domain.tidy import (
    ARCHIVING_KINDS,
    MAX_PROPOSALS_PAGE,
    PROPOSAL_KINDS,
    SHOWN_BY_DEFAULT,
)

ACTIONS = ("list", "refresh", "accept", "dismiss", "undo")


def register(command: Adder, parents: Parents) -> None:
    tidy = command(
        "tidy",
        "proposals to tidy the memory (merge, replace, retire), never applied on their own:"
        " list them, look again now, or accept, dismiss or undo one (admin key)",
        [parents.client, parents.shown],
    )
    tidy.add_argument("action", nargs="?", choices=ACTIONS, default="list", help="what to do")
    tidy.add_argument("proposal_id", nargs="?", help="the proposal (accept, dismiss, undo)")
    tidy.add_argument(
        "--kind",
        action="append",
        choices=PROPOSAL_KINDS,
        help="list: this kind, repeatable (default: those measured right nine times in ten,"
        f" and a rule deleted from its file: {', '.join(SHOWN_BY_DEFAULT)})",
    )
    tidy.add_argument(
        "--limit", type=int, default=20, help=f"list: at most this many (1 to {MAX_PROPOSALS_PAGE})"
    )
    tidy.set_defaults(func=cmd_tidy)


def cmd_tidy(args: argparse.Namespace) -> int:
    if args.action in ("accept", "dismiss", "undo") and not args.proposal_id:
        raise CommandError(f"agent-memory tidy {args.action}: which proposal? (its id)")
    with client_of(args) as memory:
        if args.action == "refresh":
            done = memory.refresh_proposals()
            found = ", ".join(f"{n} {kind}" for kind, n in done["found"].items())
            print(f"found {found}; {done['saved']} new, in {done['seconds']} s")
            return 0
        if args.action != "list":
            decided = memory.decide_proposal(args.proposal_id, args.action)
            print(f"{decided['kind']} {decided['id']}: {decided['status']}")
            return 0
        if not 1 <= args.limit <= MAX_PROPOSALS_PAGE:
            raise CommandError(f"agent-memory tidy: --limit must be 1 to {MAX_PROPOSALS_PAGE}")
        listed = memory.proposals(args.kind, args.limit)
    if args.json:
        print(json.dumps(listed, indent=2, ensure_ascii=False))
        return 0
    for proposal in listed["proposals"]:
        print(f"{proposal['id']}  {proposal['kind']}  {proposal['source_repo'] or 'global'}")
        print(f"    {proposal['reason']}")
        for n, kept in enumerate(proposal["memories"]):
            archived = proposal["kind"] in ARCHIVING_KINDS
            role = "" if archived else ("kept: " if n == 0 else "goes: ")
            # Shown as data: quoted, so that no memory can pose as this listing's lines.
            print(f"    {role}{json.dumps(kept['content'], ensure_ascii=False)}")
    others = ", ".join(f"{n} {kind}" for kind, n in listed["not_listed"].items())
    if others:
        say(f"not listed: {others} (--kind KIND lists them)")
    elif not listed["proposals"]:
        say("nothing to tidy")
    return 0
