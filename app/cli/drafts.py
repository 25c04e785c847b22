"""The review queue, through a running server: drafts (list, keep, drop, restore). What
fills it from past sessions is import-history (history.py)."""

from __future__ import annotations

import argparse
import json

from app.cli.common import Adder, CommandError, Parents, client_of, say
from app.domain.drafts import EVIDENCE_KEYS, EVIDENCE_LABELS, MAX_QUEUE_PAGE


def register(command: Adder, parents: Parents) -> None:
    client, shown = parents.client, parents.shown
    drafts = command(
        "drafts",
        "the review queue: pending drafts, newest first; keep (as a memory), drop or restore"
        " one (admin key)",
        [client, shown],
    )
    drafts.add_argument(
        "action",
        nargs="?",
        choices=["list", "keep", "drop", "restore"],
        default="list",
        help="what to do",
    )
    drafts.add_argument("draft_ids", nargs="*", help="the drafts (keep, restore: one)")
    drafts.add_argument("--text", help="keep: the memory's text, rewritten from the draft")
    drafts.add_argument("--source-repo", dest="source_repo", help="list: only this repository's")
    drafts.add_argument(
        "--limit", type=int, default=20, help=f"list: at most this many (1 to {MAX_QUEUE_PAGE})"
    )
    drafts.set_defaults(func=cmd_drafts)


def cmd_drafts(args: argparse.Namespace) -> int:
    ids = list(args.draft_ids)
    if args.action != "list" and not ids:
        raise CommandError(f"agent-memory drafts {args.action}: which draft? (its id)")
    if args.action in ("keep", "restore") and len(ids) != 1:
        raise CommandError(f"agent-memory drafts {args.action}: one draft at a time")
    with client_of(args) as memory:
        if args.action == "keep":
            kept = memory.keep_draft(ids[0], args.text)
            print(f"kept as memory {kept['memory']['id']}: {kept['message']}")
            return 0
        if args.action == "drop":
            dropped = memory.drop_drafts(ids)["dropped"]
            print(f"dropped {len(dropped)} of {len(ids)}")
            return 0
        if args.action == "restore":
            memory.restore_draft(ids[0])
            print(f"restored {ids[0]}: pending again")
            return 0
        if not 1 <= args.limit <= MAX_QUEUE_PAGE:
            raise CommandError(f"agent-memory drafts: --limit must be 1 to {MAX_QUEUE_PAGE}")
        page = memory.drafts(source_repo=args.source_repo, limit=args.limit)
    if args.json:
        print(json.dumps(page, indent=2, ensure_ascii=False))
        return 0
    for draft in page["drafts"]:
        when = str(draft["seen_at"])[:10]
        repo = draft["source_repo"] or "global"
        print(f"{draft['id']}  {draft['kind']}  {repo}  {draft['client']} {when}")
        # Shown as data: quoted, so that no draft can pose as this listing's lines.
        print(f"    {json.dumps(draft['text'], ensure_ascii=False)}")
        evidence = draft.get("evidence") or {}
        for key in (k for k in EVIDENCE_KEYS if k in evidence):
            print(f"    {EVIDENCE_LABELS[key]}: {json.dumps(evidence[key], ensure_ascii=False)}")
        for source in draft["sources"]:
            print(f"    read: {json.dumps(source, ensure_ascii=False)}")
    if not page["drafts"]:
        say("no drafts wait for review")
    return 0
