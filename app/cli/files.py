"""`agent-memory import-files`: the rules a developer already wrote for their agents
(CLAUDE.md, AGENTS.md, GEMINI.md, Cursor's rules, Copilot's instructions, their own in
their home, Claude Code's and Codex's memories) become drafts a person reviews, through a
running server; the files are read, never changed (client/agent_memory_client/rule_files/;
docs/history.md). `agent-memory onboard`: the first run, import-history then import-files,
said per source."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.cli.common import Adder, CommandError, Parents, client_of, say
from app.cli.history import (
    HOMED,
    LEFT_OUT_SHOWN,
    add_home_options,
    home_of,
    new_totals,
    queue_all,
    queue_outcome,
    run_history,
    say_summary,
)
from app.domain.drafts import MAX_WRITTEN_KEYS

MAX_CHECKOUTS = 50  # the folders of past sessions onboard reads the files of
# The clients whose folders hold a person's own rules (import-files reads them).
RULED = tuple(adapter for adapter in HOMED if adapter.home and adapter.home.rules)
OWN_FILES = "your own files"


def register(command: Adder, parents: Parents) -> None:
    files = command(
        "import-files",
        "turn the rules already written for agents (CLAUDE.md, AGENTS.md, GEMINI.md, Cursor"
        " rules, Copilot instructions, your own in the folders of "
        + ", ".join(adapter.label for adapter in RULED)
        + ", Claude Code's and Codex's memories) into drafts a person reviews (`agent-memory"
        " drafts`); the files are read, never changed",
        [parents.client, parents.shown],
    )
    files.add_argument(
        "--dir",
        action="append",
        default=[],
        metavar="PATH",
        help="a checkout whose files are read (default: the git repository here); again for more",
    )
    files.add_argument(
        "--source-repo",
        dest="source_repo",
        help="the repository its drafts are filed under, with one checkout (default: as the"
        " hooks name it, from its origin remote)",
    )
    add_shared(files)
    add_home_options(files, RULED)
    files.set_defaults(func=cmd_import_files)

    onboard = command(
        "onboard",
        "the first run after an install: import-history (past sessions of every client),"
        " then import-files for the repository here, every repository those sessions worked"
        " in, and your own files; says what it found, per source",
        [parents.client, parents.shown],
    )
    onboard.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="PATH=owner/name",
        help="sessions in PATH or under it are this repository's (as import-history's)",
    )
    add_shared(onboard)
    add_home_options(onboard, HOMED)  # RULED's among them
    onboard.set_defaults(func=cmd_onboard)


def add_shared(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-user",
        dest="no_user",
        action="store_true",
        help="leave out your own files (in each client's folder)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="say what would be queued, and queue nothing"
    )


def homes_of(args: argparse.Namespace) -> dict[str, Path]:
    """Each client's folder whose rules are read, by its name: as given, else its own."""
    return {adapter.name: home_of(args, adapter) for adapter in RULED}


def checkouts_of(args: argparse.Namespace) -> dict[str, list[Path]]:
    """Each repository's checkouts to read: --dir's, else the one here (none outside git)."""
    from agent_memory_client.git import repository_name, top_level

    found: dict[str, list[Path]] = {}
    if args.source_repo and len(args.dir) > 1:
        raise CommandError("--source-repo names the repository of one checkout: give one --dir")
    for folder in args.dir or [os.getcwd()]:
        top = top_level(Path(folder).expanduser()) if Path(folder).expanduser().is_dir() else None
        if top is None:
            if args.dir:
                raise CommandError(f"--dir {folder}: no git work tree there")
            say("not in a git repository here: no repository's files are read from it")
            return {}
        # The one here as the hooks name it (AGENT_MEMORY_REPO too); one named, by its origin.
        repo = args.source_repo or repository_name(top, from_env=not args.dir)
        if repo is None:
            raise CommandError(f"{top}: names no repository (--source-repo names it)")
        found.setdefault(repo, []).append(Path(top))
    return found


def scopes_of(checkouts: dict[str, list[Path]], homes: Any, own: bool) -> list[Any]:
    """A scope a repository (its checkouts' files together), then the person's own."""
    from agent_memory_client.rule_files import Scope, user_level_filing
    from agent_memory_client.rule_files.where import project_files, user_files

    scopes = [
        Scope(repo, {"source_repo": repo}, [f for top in tops for f in project_files(top, homes)])
        for repo, tops in checkouts.items()
    ]
    if own:
        scopes.append(Scope(OWN_FILES, user_level_filing(), user_files(homes)))
    return scopes


@dataclass
class SourceDone:
    """One source's files in one scope, and what the queue did with their drafts."""

    files: int = 0
    rules: int = 0  # every rule read
    drafts: int = 0  # each rule once in its scope (the first file's)
    left_out: int = 0  # past a file's MAX_RULES_A_FILE
    totals: dict[str, int] = field(default_factory=new_totals)


@dataclass
class ScopeDone:
    scope: str
    source_repo: str | None
    sources: dict[str, SourceDone] = field(default_factory=dict)
    files: list[dict[str, Any]] = field(default_factory=list)
    unwritten: dict[str, Any] | None = None  # the server's answer; None: not asked
    not_asked: str = ""  # why no retirement was weighed

    def json(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "source_repo": self.source_repo,
            "sources": {name: vars(done) for name, done in self.sources.items()},
            "files": self.files,
            "unwritten": self.unwritten,
            **({"not_asked": self.not_asked} if self.not_asked else {}),
        }


def import_scopes(
    args: argparse.Namespace, scopes: list[Any]
) -> tuple[list[ScopeDone], list[tuple[str, dict[str, Any]]]]:
    """Each scope's drafts queued, a source at a time; then, where every file was read
    whole, every rule's key sent, for a kept rule deleted since to be proposed for
    retirement. The drafts found, for a dry run to show."""
    from agent_memory_client.rule_files import drafts_of

    done: list[ScopeDone] = []
    found: list[tuple[str, dict[str, Any]]] = []
    memory = None if args.dry_run else client_of(args)
    try:
        for scope in scopes:
            drafted = drafts_of(scope)
            said = ScopeDone(scope.label, scope.source_repo)
            for read in drafted.reads:
                source = said.sources.setdefault(read.file.source, SourceDone())
                source.files += 1
                source.rules += len(read.rules)
                source.left_out += read.left_out
                said.files.append({
                    "file": read.file.name, "source": read.file.source, "rules": len(read.rules),
                    "left_out": read.left_out, "cut": read.cut, "error": read.error,
                })  # fmt: skip
            for name in dict.fromkeys(source for source, _ in drafted.drafts):
                batch = [d for source, d in drafted.drafts if source == name]
                said.sources[name].drafts = len(batch)
                found += [(scope.label, d) for d in batch]
                if memory is not None:
                    queue_all(memory, batch, said.sources[name].totals)
            if not drafted.whole:
                said.not_asked = "a file was cut or could not be read"
            elif len(drafted.keys) > MAX_WRITTEN_KEYS:
                said.not_asked = f"more than {MAX_WRITTEN_KEYS} rules"
            elif memory is not None:
                said.unwritten = memory.written_rules(scope.source_repo, drafted.keys)
            done.append(said)
    finally:
        if memory is not None:
            memory.close()
    return done, found


def cmd_import_files(args: argparse.Namespace) -> int:
    scopes = scopes_of(checkouts_of(args), homes_of(args), not args.no_user)
    done, found = import_scopes(args, scopes)
    if args.json:
        print(json.dumps(files_summary(args, done, found), indent=2, ensure_ascii=False))
        return 0
    if args.dry_run:
        say_found(found)
    say_scopes(args, done)
    return 0


def files_summary(
    args: argparse.Namespace, done: list[ScopeDone], found: list[tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    totals = new_totals()
    for scope in done:
        for source in scope.sources.values():
            for key in totals:
                totals[key] += source.totals[key]
    outcome = (
        {"would_queue": len(found), "found": [d for _, d in found]} if args.dry_run else totals
    )
    return {"scopes": [s.json() for s in done], **outcome}


def say_found(found: list[tuple[str, dict[str, Any]]]) -> None:
    for scope, draft in found:
        # Quoted: a file's text is data, and no escape in it reaches the terminal.
        text = json.dumps(draft["text"], ensure_ascii=False)
        written = json.dumps(draft["evidence"]["written"], ensure_ascii=False)
        print(f"{draft['kind']:<11} {scope}  {written}  {text}")


def say_scopes(args: argparse.Namespace, done: list[ScopeDone]) -> None:
    for scope in done:
        print(f"{scope.scope}:" + ("" if scope.sources else " no files agents read"))
        for name, source in scope.sources.items():
            files = f"{source.files} file{'s' if source.files != 1 else ''}"
            more = (
                f" ({source.left_out} past a file's bound, not drafted)" if source.left_out else ""
            )
            line = f"  {name}: {files}, {source.rules} rules, {source.drafts} drafts{more}"
            if not args.dry_run:
                line += f": {queue_outcome(source.totals)}"
            print(line)
        for file in scope.files:
            if file["error"] or file["cut"]:
                why = file["error"] or "larger than the bound: read up to it"
                print(f"  {json.dumps(file['file'], ensure_ascii=False)}: {why}")
        say_unwritten(scope)
    if args.dry_run:
        print("dry run: nothing queued")
    else:
        print("review them with `agent-memory drafts` (or the console's Drafts page)")


def say_unwritten(scope: ScopeDone) -> None:
    if scope.not_asked:
        print(f"  no rule weighed for retirement: {scope.not_asked}")
    answer = scope.unwritten
    if not answer:
        return
    if answer["withdrawn"]:
        print(
            f"  {answer['withdrawn']} retirement proposals taken back: their rules are written"
            " again"
        )
    if answer["proposed"]:
        print(
            f"  {answer['proposed']} memories kept from rules deleted since: proposed for"
            " retirement (`agent-memory tidy`)"
        )
    if answer["pending"]:
        ids = " ".join(answer["pending"][:LEFT_OUT_SHOWN])
        print(
            f"  {len(answer['pending'])} drafts wait whose rule was deleted since: drop them"
            f" with `agent-memory drafts drop {ids}`"
        )
    if answer["more"]:
        print("  more rules deleted since than one run weighs: the rest at the next run")


def cmd_onboard(args: argparse.Namespace) -> int:
    """import-history, then import-files for the checkout here, every checkout the past
    sessions ran in (at most MAX_CHECKOUTS, the history's first), and the person's own
    files; each source said."""
    history_args = argparse.Namespace(
        **vars(args), client="all", since=None, repo=None, file=[], distill=None,
        distill_budget=None,
    )  # fmt: skip
    history = run_history(history_args)
    checkouts = checkouts_of(argparse.Namespace(dir=[], source_repo=None))
    for top, repo in list(history.checkouts.items())[:MAX_CHECKOUTS]:
        tops = checkouts.setdefault(repo, [])
        if Path(top) not in tops:
            tops.append(Path(top))
    scopes = scopes_of(checkouts, homes_of(args), not args.no_user)
    done, found = import_scopes(args, scopes)
    if args.json:
        files = files_summary(args, done, found)
        print(json.dumps({"history": {**history.summary, "by_client": history.by_client},
                          "files": files}, indent=2, ensure_ascii=False))  # fmt: skip
        return 0
    print("Past sessions:")
    for client, counts in history.by_client.items():
        print(f"  {client}: {counts['sessions']} sessions, {counts['drafts']} drafts")
    if not history.by_client:
        print("  none found")
    say_summary(history_args, history.report, history.totals)
    print("Files agents read:")
    if args.dry_run:
        say_found(found)
    say_scopes(args, done)
    return 0
