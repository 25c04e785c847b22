"""Past sessions as drafts for a person to review (`agent-memory import-history`).

A developer who installs agent-memory after months of agent sessions has, on disk, what it
would have learned: each client keeps its sessions as JSON lines (claude_code.py, codex.py
read them, changing nothing). A session is replayed as the moments the live hooks see
(loop.py's events), and two rules make drafts of it, no model involved:

- **fix**: a command failed, the agent changed files, the same command passed: the live
  hooks' rule (drafting.py), word for word;
- **instruction**: the user corrected the agent or gave a standing rule ("no, use the make
  target", "never touch the generated files"): instructions.py.

A draft is filed under the session's repository (its working folder's git origin, as the
hooks name it), with the untrusted input the session had read by then. Nothing here stores
anything: the server queues the drafts, screened, for a person to keep or drop.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from agent_memory_client.drafting import after_pass, failure_of, with_change
from agent_memory_client.git import normalise_remote, repository_name, top_level
from agent_memory_client.history.instructions import instruction_of
from agent_memory_client.loop import SOURCES_A_CALL, Event

# A session's drafts of each kind, at most (the live hooks keep a session's newest three).
PER_SESSION = 3


@dataclass
class Moment:
    """One moment of a past session: the loop's event, and when it happened (ISO 8601)."""

    at: str
    event: Event


@dataclass
class Transcript:
    client: str  # as the server names it: claude-code, codex
    session: str  # the client's own id
    cwd: str
    path: Path  # the file it was read from
    moments: list[Moment] = field(default_factory=list)
    remote: str | None = None  # the repository's remote, where the client recorded it


@dataclass
class Found:
    kind: str  # fix, instruction
    text: str
    files: list[str]
    seen_at: str
    sources: list[str]

    def as_draft(self, transcript: Transcript, source_repo: str) -> dict[str, object]:
        return {
            "kind": self.kind, "text": self.text, "files": self.files,
            "source_repo": source_repo, "client": transcript.client,
            "client_session": transcript.session, "seen_at": self.seen_at or None,
            "sources": self.sources[-SOURCES_A_CALL:],
        }  # fmt: skip


def drafts_of(transcript: Transcript, top: str | None) -> list[Found]:
    """What the session shows, replayed: its fixes (the newest PER_SESSION) and its user's
    instructions (the first PER_SESSION). `top`: the repository's top folder, which an
    edited file's path is made relative to."""
    fixes: list[Found] = []
    rules: list[Found] = []
    failure: dict[str, object] | None = None
    sources: list[str] = []
    for moment in transcript.moments:
        event = moment.event
        if event.kind == "fetched":
            sources += [s for s in event.sources if s not in sources]
        elif event.kind == "prompt":
            rule = instruction_of(event.text)
            if rule is not None and len(rules) < PER_SESSION:
                rules.append(Found("instruction", rule, [], moment.at, list(sources)))
        elif event.kind == "failed":
            failure = failure_of(event.command, event.text)
        elif event.kind == "edited" and failure is not None:
            path = relative(event.path, transcript.cwd, top)
            failure = (with_change(failure, path) if path else None) or failure
        elif event.kind == "ran" and failure is not None:
            ended, draft = after_pass(failure, event.command)
            if ended:
                failure = None
            if draft is not None:
                fix = Found("fix", str(draft["text"]), list(draft["files"]), moment.at, [])
                fixes.append(fix)
                fix.sources = list(sources)
    return fixes[-PER_SESSION:] + rules


def relative(path: str, cwd: str, top: str | None) -> str | None:
    """A file as the repository names it; None for one outside it (the live hooks' rule)."""
    if not path:
        return None
    full = os.path.normpath(path if os.path.isabs(path) or not cwd else os.path.join(cwd, path))
    base = top or cwd
    if not base:
        return path
    found = os.path.relpath(full, base)
    return None if found.startswith("..") else found


@dataclass
class Report:
    sessions: int = 0
    no_repository: int = 0  # sessions whose folder is gone or in no git repository
    other_repository: int = 0  # left out by --repo
    drafts: dict[str, int] = field(default_factory=lambda: {"fix": 0, "instruction": 0})


def history_drafts(
    transcripts: Iterable[Transcript],
    report: Report,
    only_repo: str | None = None,
    since: datetime | None = None,
    name_of: Callable[[Transcript], tuple[str | None, str | None]] | None = None,
) -> Iterator[dict[str, object]]:
    """Every transcript's drafts since `since`, as the server takes them; each distinct
    finding once, counted into `report`."""
    name_of = name_of or repository_of
    seen: set[tuple[str, str, str]] = set()
    for transcript in transcripts:
        report.sessions += 1
        repo, top = name_of(transcript)
        if repo is None:
            report.no_repository += 1
            continue
        if only_repo is not None and repo != only_repo:
            report.other_repository += 1
            continue
        for found in drafts_of(transcript, top):
            if since is not None and not after(found.seen_at, since):
                continue
            key = (repo, found.kind, found.text)
            if key in seen:
                continue
            seen.add(key)
            report.drafts[found.kind] += 1
            yield found.as_draft(transcript, repo)


_NAMES: dict[str, tuple[str | None, str | None]] = {}


def repository_of(transcript: Transcript) -> tuple[str | None, str | None]:
    """(repository, top folder) of a session: its working folder's git origin, named as
    the hooks name it; or the remote the client recorded, when the folder is gone. A
    folder in no git repository names none: a folder's name is no repository's."""
    cwd = transcript.cwd
    if cwd not in _NAMES:
        top = top_level(cwd) if cwd and os.path.isdir(cwd) else None
        _NAMES[cwd] = (repository_name(cwd, from_env=False), top) if top else (None, None)
    repo, top = _NAMES[cwd]
    if repo is None and transcript.remote:
        named = normalise_remote(transcript.remote)
        return (named[1] if named else None), None
    return repo, top


def after(stamp: str, since: datetime) -> bool:
    """Whether an ISO 8601 time (a transcript's) is at or after `since`; an unreadable one
    is taken as recent."""
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return True
    return (when if when.tzinfo else when.replace(tzinfo=since.tzinfo)) >= since


def transcripts(
    files: Iterable[Path],
    read: Callable[[Path], Transcript | None],
    keep: Callable[[Path], bool] | None = None,
) -> Iterator[Transcript]:
    """The sessions in a client's transcript files (its `transcript_files`, read by its
    `read`), those `keep` takes."""
    for path in files:
        if keep is None or keep(path):
            found = read(path)
            if found is not None:
                yield found


def since_filter(since: datetime | None) -> Callable[[Path], bool]:
    """Whether a transcript file may hold moments since `since` (by its last change)."""
    if since is None:
        return lambda path: True
    stamp = since.timestamp()
    return lambda path: path.stat().st_mtime >= stamp
