"""A session: what an agent worked on in a repository, and how it ended; and the rules a
session's start and end must pass."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from app.domain.errors import InvalidInputError
from app.domain.validation import (
    bounded_list,
    clean_commit,
    clean_folded,
    clean_line,
    clean_optional_text,
    clean_paths,
    one_of,
)


@dataclass(frozen=True, slots=True)
class Session:
    id: UUID
    source_repo: str | None
    agent: str | None
    task: str | None
    status: str
    summary: str | None
    key_changes: list[dict[str, Any]]
    started_at: datetime
    ended_at: datetime | None
    git_branch: str | None = None
    git_commit: str | None = None


# How a session ends: "abandoned" when the agent reported nothing (it did nothing, or its
# owner ended it from the console); no snapshot shows those.
SESSION_STATUSES = ("completed", "failed", "abandoned")


MAX_SESSION_PAGE = 100


def session_page(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SESSION_PAGE:
        raise InvalidInputError(f"limit must be 1 to {MAX_SESSION_PAGE}", field="limit")
    return limit


# Changed files a session start may name (a larger change marks what it names).
CHANGED_FILES = 500


@dataclass(frozen=True, slots=True)
class CommitChange:
    """One commit of the history since the repository's last session, with its files."""

    commit: str
    files: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class SessionRequest:
    source_repo: str | None = None
    agent: str | None = None
    task: str | None = None
    # Where the work starts (HEAD), and the files changed since the repository's last
    # session: memories linked to them are marked possibly stale.
    git_branch: str | None = None
    git_commit: str | None = None
    changed_files: Sequence[str] | None = None
    # The commits since then, newest first, each with its files: a memory written at one of
    # them is marked only for a file changed after it (a fresh learning is not "stale").
    history: Sequence[CommitChange] | None = None


@dataclass(frozen=True, slots=True)
class SessionStartRequest:
    """A session start that passed the rules (only session_draft makes one)."""

    source_repo: str | None
    agent: str | None
    task: str | None
    git_branch: str | None = None
    git_commit: str | None = None
    changed_files: tuple[str, ...] = ()
    history: tuple[CommitChange, ...] = ()

    @property
    def all_changed(self) -> tuple[str, ...]:
        """Every file named, by the list or by a commit of the history."""
        named = dict.fromkeys(self.changed_files)
        for change in self.history:
            named.update(dict.fromkeys(change.files))
        return tuple(named)


def session_draft(request: SessionRequest) -> SessionStartRequest:
    history = []
    for change in bounded_list(request.history, "history"):
        commit = clean_commit(change.commit, "history.commit")
        if commit is None:
            raise InvalidInputError("each history entry needs its commit", field="history.commit")
        files = clean_paths(change.files, "history.files", CHANGED_FILES)
        history.append(CommitChange(commit, files))
    return SessionStartRequest(
        source_repo=clean_line(request.source_repo, "source_repo"),
        agent=clean_line(request.agent, "agent"),
        task=clean_folded(request.task, "task"),
        git_branch=clean_line(request.git_branch, "git_branch"),
        git_commit=clean_commit(request.git_commit),
        changed_files=clean_paths(request.changed_files, "changed_files", CHANGED_FILES),
        history=tuple(history),
    )


def changed_after(
    files: Sequence[str],
    written_at: str | None,
    changed: Sequence[str],
    history: Sequence[CommitChange],
) -> list[str]:
    """The memory's files that changed after it was written. Without its commit, or a
    commit the history does not hold (older than the last session, another branch), every
    one of its files that changed; with one, only those a newer commit changed."""
    mine = sorted(set(files) & set(changed))
    position = next(
        (i for i, c in enumerate(history) if written_at and c.commit.startswith(written_at)),
        None,
    )
    if position is None:
        return mine
    newest_change = {}
    for i, change in reversed(list(enumerate(history))):
        newest_change.update(dict.fromkeys(change.files, i))
    return [f for f in mine if newest_change.get(f, -1) < position]


@dataclass(frozen=True, slots=True)
class KeyChange:
    file: str
    action: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class SessionEnd:
    status: str
    summary: str | None = None
    key_changes: Sequence[KeyChange] = ()


def session_end(draft: SessionEnd) -> SessionEnd:
    changes = []
    for change in bounded_list(draft.key_changes, "key_changes"):
        changes.append(
            KeyChange(
                file=clean_line(change.file, "file") or "",
                action=clean_line(change.action, "action"),
                description=clean_folded(change.description, "description"),
            )
        )
    return SessionEnd(
        status=one_of(draft.status, "status", SESSION_STATUSES, "completed"),
        summary=clean_optional_text(draft.summary, "summary"),
        key_changes=changes,
    )
