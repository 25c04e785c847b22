"""Commands for the review queue, through a running server: import-history (past agent
sessions on this machine, as drafts) and drafts (list, keep, drop, restore)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.cli.common import Adder, CommandError, Parents, client_of, say
from app.client import ClientError
from app.domain.drafts import MAX_QUEUE_PAGE, MAX_QUEUED_A_CALL

CLIENTS = ("claude-code", "codex")


def register(command: Adder, parents: Parents) -> None:
    client, shown = parents.client, parents.shown
    history = command(
        "import-history",
        "turn past Claude Code and Codex sessions on this machine into drafts a person"
        " reviews (`agent-memory drafts`); the transcripts are read, never changed",
        [client, shown],
    )
    history.add_argument(
        "--client", choices=[*CLIENTS, "all"], default="all", help="whose sessions (all)"
    )
    history.add_argument("--since", help="only sessions since this date (2026-09-01)")
    history.add_argument("--repo", help="only this repository's sessions (owner/name)")
    history.add_argument(
        "--dry-run", action="store_true", help="say what would be queued, and queue nothing"
    )
    history.add_argument("--claude-dir", help="Claude Code's folder (default: ~/.claude)")
    history.add_argument("--codex-dir", help="Codex's folder (default: CODEX_HOME, else ~/.codex)")
    history.set_defaults(func=cmd_import_history)

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


def since_of(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        since = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--since must be a date (2026-09-01), not {text!r}") from None
    return since if since.tzinfo else since.replace(tzinfo=UTC)


def found_drafts(args: argparse.Namespace, report: Any) -> Iterator[dict[str, Any]]:
    from agent_memory_client.history import (
        claude_code,
        codex,
        history_drafts,
        since_filter,
        transcripts,
    )

    since = since_of(args.since)
    keep = since_filter(since)
    sources = []
    if args.client in ("claude-code", "all"):
        root = Path(args.claude_dir).expanduser() if args.claude_dir else claude_code.default_root()
        sources.append(transcripts(claude_code.transcript_files(root), claude_code.read, keep))
    if args.client in ("codex", "all"):
        root = Path(args.codex_dir).expanduser() if args.codex_dir else codex.default_root()
        sources.append(transcripts(codex.transcript_files(root), codex.read, keep))
    for sessions in sources:
        yield from history_drafts(sessions, report, args.repo, since)


def cmd_import_history(args: argparse.Namespace) -> int:
    """Past sessions' drafts, queued for a person in calls of MAX_QUEUED_A_CALL; the server
    passes over what an earlier run queued, and leaves out a draft holding a secret."""
    from agent_memory_client.history import Report

    report = Report()
    drafts = list(found_drafts(args, report))
    totals = {"queued": 0, "known": 0, "refused": 0, "refused_by_rule": 0}
    if not args.dry_run and drafts:
        with client_of(args) as memory:
            for start in range(0, len(drafts), MAX_QUEUED_A_CALL):
                batch = drafts[start : start + MAX_QUEUED_A_CALL]
                answer = queue_past_refusals(memory, batch, totals)
                totals["queued"] += len(answer["queued"])
                totals["known"] += answer["known"]
                totals["refused"] += len(answer["refused"])
    summary = {
        "sessions": report.sessions,
        "sessions_without_a_repository": report.no_repository,
        "sessions_of_other_repositories": report.other_repository,
        "drafts": report.drafts,
        **({"would_queue": len(drafts)} if args.dry_run else totals),
    }
    if args.json:
        print(json.dumps({**summary, **({"found": drafts} if args.dry_run else {})}, indent=2))
        return 0
    if args.dry_run:
        for draft in drafts:
            # Quoted: a transcript's text is data, and no escape in it reaches the terminal.
            text = json.dumps(draft["text"], ensure_ascii=False)
            print(f"{draft['kind']:<11} {draft['source_repo']}  {text}")
    kinds = ", ".join(f"{n} {kind}" for kind, n in report.drafts.items())
    print(
        f"{report.sessions} sessions read ({report.no_repository} in no repository"
        + (f", {report.other_repository} of other repositories" if args.repo else "")
        + f"); drafts: {kinds}"
    )
    if args.dry_run:
        print("dry run: nothing queued")
    else:
        print(
            f"queued {totals['queued']}, already queued {totals['known']}, left out for"
            f" holding a secret {totals['refused']}, for another input rule"
            f" {totals['refused_by_rule']}: review them with `agent-memory drafts`"
        )
    return 0


def queue_past_refusals(
    memory: Any, batch: list[dict[str, Any]], totals: dict[str, int]
) -> dict[str, Any]:
    """The batch queued; a draft the server's input rules refuse (it names it:
    `drafts.N.field`, a hidden character in a transcript's text) is left out, said, and
    the rest sent again. Any other refusal stops the import."""
    while batch:
        try:
            return dict(memory.queue_drafts(batch))
        except ClientError as exc:
            named = {int(f.split(".")[1]) for f in exc.fields if f.startswith("drafts.")
                     and f.split(".")[1].isdigit()}  # fmt: skip
            if exc.status != 422 or not named:
                raise
            for i in sorted(named, reverse=True):
                say(f"left out ({exc.detail}): {json.dumps(batch[i]['text'])[:120]}")
                del batch[i]
            totals["refused_by_rule"] += len(named)
    return {"queued": [], "known": 0, "refused": []}


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
        print(f"{draft['id']}  {draft['kind']}  {draft['source_repo']}  {draft['client']} {when}")
        # Shown as data: quoted, so that no draft can pose as this listing's lines.
        print(f"    {json.dumps(draft['text'], ensure_ascii=False)}")
        for source in draft["sources"]:
            print(f"    read: {json.dumps(source, ensure_ascii=False)}")
    if not page["drafts"]:
        say("no drafts wait for review")
    return 0
