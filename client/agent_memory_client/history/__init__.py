"""Past sessions as drafts for a person to review (`agent-memory import-history`).

A developer who installs agent-memory after months of agent sessions has, on disk, what it
would have learned: each client keeps its sessions as JSON (claude_code.py, codex.py,
gemini.py, copilot.py, opencode.py and cursor.py read them, changing nothing). A session is
replayed as the moments the live hooks see (loop/events.py), and three rules make drafts
of it, no model involved (capture.py):

- **fix**: a command failed with a real error, something changed (a file edited, a command
  run, the command itself), the same work passed: drafting/'s rule, which the live hooks
  run too;
- **instruction**: the user stated a standing rule or corrected the agent's way of working,
  in a prompt or in an answer to the agent's own question: instructions.py;
- **convention**: how the project is built, tested, linted or run, shown by what ran and
  passed: conventions.py.

A draft is filed under the session's repository (repository.py: its folder's git origin,
a prefix the person maps, or what the transcript records; never a folder's name), with the
untrusted input the session had read by then. Nothing here stores anything: the server
queues the drafts, screened, for a person to keep or drop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from agent_memory_client.loop import SOURCES_A_CALL, Event
from agent_memory_client.protocol import EVIDENCE_CHARS

if TYPE_CHECKING:
    from agent_memory_client.history.clues import Clue


@dataclass
class Moment:
    """One moment of a past session: the loop's event, when it happened (ISO 8601), the
    anchor that names it in its file (a tool call's id, a message's, or `L<line>`), and
    whether a subagent made it."""

    at: str
    event: Event
    anchor: str = ""
    sub: bool = False


@dataclass(frozen=True, slots=True)
class Origin:
    """The session a draft comes from, as the queue names it (its transcript let go)."""

    client: str
    session: str


@dataclass
class Transcript:
    client: str  # as the server names it: claude-code, codex, gemini-cli, ...
    session: str  # the client's own id
    cwd: str
    path: Path  # the file it was read from
    moments: list[Moment] = field(default_factory=list)
    clues: list[Clue] = field(default_factory=list)  # of its repository (clues.py)

    @property
    def origin(self) -> Origin:
        return Origin(self.client, self.session)


@dataclass
class Found:
    """A draft as capture makes it: its kind, its text, the files it is about, when and
    what the session had read by then, the evidence a person reviews it by, the key that
    makes one lesson one draft, and the anchors of the moments it comes from."""

    kind: str  # fix, instruction, convention
    text: str
    files: list[str]
    seen_at: str
    sources: list[str] = field(default_factory=list)
    evidence: dict[str, str] = field(default_factory=dict)
    key: str = ""
    anchors: list[str] = field(default_factory=list)
    why: str = ""  # which rule made it (for measuring each: bench/capture.py)

    def as_draft(self, origin: Origin, source_repo: str) -> dict[str, object]:
        return {
            "kind": self.kind,
            "text": self.text,
            "files": self.files,
            "source_repo": source_repo,
            "client": origin.client,
            "client_session": origin.session,
            "seen_at": self.seen_at or None,
            "sources": self.sources[-SOURCES_A_CALL:],
            "evidence": {k: _cut(v, EVIDENCE_CHARS) for k, v in self.evidence.items() if v},
            **({"key": self.key} if self.key else {}),
        }


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


@dataclass
class LeftOut:
    client: str
    session: str
    cwd: str
    reason: str


@dataclass
class Report:
    sessions: int = 0
    no_repository: int = 0  # sessions whose repository nothing names
    other_repository: int = 0  # left out by --repo
    drafts: dict[str, int] = field(
        default_factory=lambda: {"fix": 0, "instruction": 0, "convention": 0}
    )
    left_out: list[LeftOut] = field(default_factory=list)

    def count(self, drafts: Iterable[Found]) -> None:
        """The drafts that go to the queue, by kind (after --distill dropped any)."""
        for draft in drafts:
            self.drafts[draft.kind] = self.drafts.get(draft.kind, 0) + 1


def named_sessions(
    transcripts: Iterable[Transcript],
    report: Report,
    only_repo: str | None = None,
    name_of: Callable[[Transcript], tuple[str | None, str | None, str]] | None = None,
) -> Iterator[tuple[Transcript, str, str | None]]:
    """Each session with its repository and top folder, counted into `report`; one that
    nothing names waits for the others (one of its folder's may name it), else is left
    out with the reason. `name_of`: repository.py's Namer by default."""
    from agent_memory_client.history.repository import Namer

    name_of = name_of or Namer().name
    unnamed: list[Transcript] = []

    def kept(transcript: Transcript, repo: str) -> bool:
        if only_repo is not None and repo != only_repo:
            report.other_repository += 1
            return False
        return True

    for transcript in transcripts:
        report.sessions += 1
        repo, top, _ = name_of(transcript)
        if repo is None:
            unnamed.append(transcript)
        elif kept(transcript, repo):
            yield transcript, repo, top
    for transcript in unnamed:
        repo, top, why = name_of(transcript)
        if repo is None:
            report.no_repository += 1
            report.left_out.append(
                LeftOut(transcript.client, transcript.session, transcript.cwd, why)
            )
        elif kept(transcript, repo):
            yield transcript, repo, top


def history_found(
    transcripts: Iterable[Transcript],
    report: Report,
    only_repo: str | None = None,
    since: datetime | None = None,
    name_of: Callable[[Transcript], tuple[str | None, str | None, str]] | None = None,
    candidates: bool = False,
) -> list[tuple[Origin, str, Found]]:
    """Every named session's drafts since `since` with its session and repository, and
    each repository's conventions; one lesson once (its key, across sessions), counted into
    `report`. `candidates`: every moment that may hold a lesson, for the person's own agent
    to judge (distill.py), not only what the rules draft."""
    from agent_memory_client.history.capture import (
        candidates_of,
        conventions_of,
        drafts_of,
        one_each,
    )
    from agent_memory_client.history.conventions import Conventions

    # Only the drafts and where they come from are kept: a year of sessions is never held.
    found: list[tuple[Origin, str, Found]] = []
    # Each repository's conventions, and its newest session (which carries their drafts).
    by_repo: dict[str, tuple[Conventions, Origin, str]] = {}
    for transcript, repo, top in named_sessions(transcripts, report, only_repo, name_of):
        origin = transcript.origin
        conventions, newest, newest_at = by_repo.get(repo) or (Conventions(), origin, "")
        read = candidates_of if candidates else drafts_of
        made = read(transcript, top, repo, conventions)
        found += [(origin, repo, d) for d in made if since is None or after(d.seen_at, since)]
        last = last_moment(transcript)
        if last >= newest_at:
            newest, newest_at = origin, last
        by_repo[repo] = (conventions, newest, newest_at)
    for repo, (conventions, newest, newest_at) in by_repo.items():
        for draft in conventions_of(conventions, repo, newest_at):
            found.append((newest, repo, draft))
    return list(one_each(found))


def history_drafts(
    transcripts: Iterable[Transcript],
    report: Report,
    only_repo: str | None = None,
    since: datetime | None = None,
    name_of: Callable[[Transcript], tuple[str | None, str | None, str]] | None = None,
) -> Iterator[dict[str, object]]:
    """history_found()'s drafts, as the server takes them."""
    found = history_found(transcripts, report, only_repo, since, name_of)
    report.count(draft for _, _, draft in found)
    for origin, repo, draft in found:
        yield draft.as_draft(origin, repo)


def last_moment(transcript: Transcript) -> str:
    return next((m.at for m in reversed(transcript.moments) if m.at), "")


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
