"""`agent-memory import-history`: past agent sessions on this machine become drafts a person
reviews (`agent-memory drafts`), through a running server. The transcripts are read, never
changed (client/agent_memory_client/history/ reads each client's; docs/history.md)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_memory_client.clients import ADAPTERS, Adapter, named
from agent_memory_client.history.distill import distillers
from app.cli.common import Adder, CommandError, Parents, client_of, say
from app.client import ClientError
from app.domain.drafts import MAX_QUEUED_A_CALL

# The clients whose sessions are found on this machine: those with a folder of their own.
HOMED = tuple(adapter for adapter in ADAPTERS if adapter.home is not None)
LEFT_OUT_SHOWN = 20


def register(command: Adder, parents: Parents) -> None:
    labels = [adapter.label for adapter in HOMED]
    history = command(
        "import-history",
        f"turn past {', '.join(labels[:-1])} and {labels[-1]} sessions on this machine (or"
        " transcript files) into drafts a person reviews (`agent-memory drafts`); the"
        " transcripts are read, never changed",
        [parents.client, parents.shown],
    )
    names = [name for adapter in HOMED for name in adapter.names]
    history.add_argument(
        "--client", choices=[*names, "all"], default="all", help="whose sessions (all)"
    )
    history.add_argument("--since", help="only sessions since this date (2026-09-01)")
    history.add_argument("--repo", help="only this repository's sessions (owner/name)")
    history.add_argument(
        "--dry-run", action="store_true", help="say what would be queued, and queue nothing"
    )
    add_home_options(history, HOMED)
    history.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="a transcript file of any client read (.gz too; an `opencode export`, a Cursor"
        " transcript); again for more",
    )
    history.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="PATH=owner/name",
        help="sessions in PATH or under it (a worktree root) are this repository's; for a"
        " folder that is gone; again for more",
    )
    history.add_argument(
        "--distill",
        choices=[name for adapter in distillers().values() for name in adapter.names],
        help="your own agent CLI writes each lesson from its evidence, or says there is none"
        " (sent to that CLI alone, on your subscription; off by default)",
    )
    history.add_argument(
        "--distill-budget",
        type=int,
        metavar="CHARS",
        help="at most this many characters sent to it (the plan says what fits)",
    )
    history.set_defaults(func=cmd_import_history)


def since_of(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        since = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--since must be a date (2026-09-01), not {text!r}") from None
    return since if since.tzinfo else since.replace(tzinfo=UTC)


def add_home_options(parser: argparse.ArgumentParser, adapters: Iterable[Adapter]) -> None:
    """An option naming each client's folder instead of its own (`--gemini-dir`)."""
    for adapter in adapters:
        parser.add_argument(
            adapter.home_option, help=f"{adapter.label}'s folder (default: its own)"
        )


def home_of(args: argparse.Namespace, adapter: Adapter) -> Path:
    """The client's folder: as its option names it, else its own."""
    assert adapter.home is not None
    given = getattr(args, adapter.home_option.removeprefix("--").replace("-", "_"), None)
    return Path(given).expanduser() if given else adapter.home.default()


def sessions_of(args: argparse.Namespace) -> Iterator[Any]:
    """The transcripts the arguments name: each client's folder, and the files given."""
    from agent_memory_client.history import since_filter, transcripts
    from agent_memory_client.history.formats import read_any

    keep = since_filter(since_of(args.since))
    chosen = [] if args.file and args.client == "all" else list(HOMED)
    if args.client != "all":
        chosen = [named(args.client)]
    for adapter in chosen:
        reader = adapter.reading()
        yield from transcripts(reader.transcript_files(home_of(args, adapter)), reader.read, keep)
    for file in args.file:
        path = Path(file).expanduser()
        if not path.is_file():
            raise CommandError(f"--file {file}: no such file")
        found = read_any(path)
        if found is None:
            say(f"{file}: not a transcript of a client this reads; passed over")
        else:
            yield found


@dataclass
class HistoryRun:
    """What an import of past sessions found and did."""

    summary: dict[str, Any]
    report: Any
    totals: dict[str, int]
    drafts: list[dict[str, Any]]
    # Each client's sessions read and drafts found (`onboard` says them).
    by_client: dict[str, dict[str, int]] = field(default_factory=dict)
    checkouts: dict[str, str] = field(default_factory=dict)  # their folders: top -> repo


def new_totals() -> dict[str, int]:
    return {"queued": 0, "known": 0, "held": 0, "refused": 0, "refused_by_rule": 0}


def run_history(args: argparse.Namespace) -> HistoryRun:
    """Past sessions' drafts, queued for a person in calls of MAX_QUEUED_A_CALL; the server
    passes over what an earlier run queued, and leaves out a draft holding a secret."""
    from agent_memory_client.history import Report, history_found
    from agent_memory_client.history.repository import Namer, parse_maps

    try:
        namer = Namer(parse_maps(args.map))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    report = Report()
    by_client: dict[str, dict[str, int]] = {}

    def counted(sessions: Iterator[Any]) -> Iterator[Any]:
        for session in sessions:
            by_client.setdefault(session.client, {"sessions": 0, "drafts": 0})["sessions"] += 1
            yield session

    found = history_found(
        counted(sessions_of(args)),
        report,
        args.repo,
        since_of(args.since),
        namer.name,
        candidates=args.distill is not None,
    )
    if args.distill:
        found = distilled(found, args.distill, args.distill_budget, args.dry_run)
    report.count(draft for _, _, draft in found)
    for origin, _, _ in found:
        by_client[origin.client]["drafts"] += 1
    drafts = [draft.as_draft(origin, repo) for origin, repo, draft in found]
    totals = new_totals()
    if not args.dry_run and drafts:
        with client_of(args) as memory:
            queue_all(memory, drafts, totals)
    summary = {
        "sessions": report.sessions,
        "sessions_without_a_repository": report.no_repository,
        "sessions_of_other_repositories": report.other_repository,
        "left_out": [vars(left) for left in report.left_out],
        "drafts": report.drafts,
        **({"would_queue": len(drafts)} if args.dry_run else totals),
    }
    return HistoryRun(summary, report, totals, drafts, by_client, namer.checkouts())


def queue_all(memory: Any, drafts: list[dict[str, Any]], totals: dict[str, int]) -> None:
    """The drafts queued in calls of MAX_QUEUED_A_CALL, what each did added to `totals`."""
    for start in range(0, len(drafts), MAX_QUEUED_A_CALL):
        answer = queue_past_refusals(memory, drafts[start : start + MAX_QUEUED_A_CALL], totals)
        totals["queued"] += len(answer["queued"])
        totals["known"] += answer["known"]
        totals["held"] += answer.get("held", 0)
        totals["refused"] += len(answer["refused"])


def cmd_import_history(args: argparse.Namespace) -> int:
    done = run_history(args)
    if args.json:
        found = {"found": done.drafts} if args.dry_run else {}
        print(json.dumps({**done.summary, **found}, indent=2))
        return 0
    if args.dry_run:
        for draft in done.drafts:
            # Quoted: a transcript's text is data, and no escape in it reaches the terminal.
            text = json.dumps(draft["text"], ensure_ascii=False)
            print(f"{draft['kind']:<11} {draft['source_repo']}  {text}")
    say_summary(args, done.report, done.totals)
    return 0


def say_summary(args: argparse.Namespace, report: Any, totals: dict[str, int]) -> None:
    kinds = ", ".join(f"{n} {kind}" for kind, n in report.drafts.items())
    print(
        f"{report.sessions} sessions read ({report.no_repository} left out for naming no"
        " repository"
        + (f", {report.other_repository} of other repositories" if args.repo else "")
        + f"); drafts: {kinds}"
    )
    for left in report.left_out[:LEFT_OUT_SHOWN]:
        # Quoted: a folder's name comes from a transcript.
        print(f"  left out: {left.client} {left.session} in {json.dumps(left.cwd)}: {left.reason}")
    if len(report.left_out) > LEFT_OUT_SHOWN:
        print(f"  ... and {len(report.left_out) - LEFT_OUT_SHOWN} more (--json lists them all)")
    if args.dry_run:
        print("dry run: nothing queued")
    else:
        print(f"{queue_outcome(totals)}: review them with `agent-memory drafts`")


def queue_outcome(totals: dict[str, int]) -> str:
    return (
        f"queued {totals['queued']}, already queued {totals['known']}, already held as"
        f" memories {totals['held']}, left out for holding a secret {totals['refused']}, for"
        f" another input rule {totals['refused_by_rule']}"
    )


def distilled(
    found: list[tuple[Any, str, Any]], client: str, budget: int | None, dry_run: bool
) -> list[tuple[Any, str, Any]]:
    """The candidates as the person's own agent wrote them up (history/distill.py): the plan
    said before anything is sent; on a dry run, only the plan."""
    from agent_memory_client.history.distill import distill, plan

    candidates = [draft for _, _, draft in found]
    chosen = plan(candidates, budget, repos=[repo for _, repo, _ in found])
    say(str(chosen))
    if dry_run:
        return found
    written = distill(candidates, client, chosen, record_client=True)
    return [(t, repo, d) for (t, repo, _), d in zip(found, written, strict=True) if d is not None]


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
            named = {
                int(f.split(".")[1])
                for f in exc.fields
                if f.startswith("drafts.") and f.split(".")[1].isdigit()
            }
            if exc.status != 422 or not named:
                raise
            for i in sorted(named, reverse=True):
                say(f"left out ({exc.detail}): {json.dumps(batch[i]['text'])[:120]}")
                del batch[i]
            totals["refused_by_rule"] += len(named)
    return {"queued": [], "known": 0, "refused": []}
