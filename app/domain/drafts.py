"""A session's drafts: what the hooks saw the agent learn (a failed command that a change
then fixed), kept beside the session, never as a memory: no search, snapshot or recall serves
one. The session's stop lists them for the agent to keep (one `remember`, rewritten as it
likes) or drop; what it still holds when it ends goes to the review queue below, for a
person. Few and short by construction."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from app.domain.errors import InvalidInputError
from app.domain.provenance import clean_sources
from app.domain.validation import FIELD_CHARS, clean_line, clean_paths, clean_text, one_of

MAX_DRAFTS = 3  # a session keeps its newest three
DRAFT_CHARS = 500
DRAFT_FILES = 10


@dataclass(frozen=True, slots=True)
class DraftText:
    """A draft as a hook sends it (the text and the files it is about), before its rules."""

    text: str
    files: Sequence[str] | None = None


@dataclass(frozen=True, slots=True)
class Draft:
    text: str
    files: tuple[str, ...] = ()


def draft_of(draft: DraftText) -> Draft:
    text = clean_text(draft.text, "text", max_chars=DRAFT_CHARS)
    if not text:
        raise InvalidInputError("text must not be empty", field="text")
    return Draft(text=text, files=clean_paths(draft.files, "files", DRAFT_FILES))


# --- The review queue: drafts a person keeps, edits or drops (migration 0041) -------------
# A draft there comes from an agent's past session (`agent-memory import-history` read it
# from the client's transcripts) or from a session that ended holding it. It is never a
# memory by itself: nothing searches it, nothing hands it to an agent.

DRAFT_KINDS = ("fix", "instruction")  # a failure a change fixed; a user's standing rule
DRAFT_CLIENTS = ("claude-code", "codex", "gemini-cli", "cursor")
DRAFT_STATUSES = ("pending", "kept", "dropped")
MAX_QUEUED_A_CALL = 100  # drafts one import call sends
MAX_QUEUE_PAGE = 100
SESSION_ID_CHARS = 200


@dataclass(frozen=True, slots=True)
class HistoryDraftText:
    """A draft as an importer sends it, before its rules."""

    kind: str
    text: str
    source_repo: str
    client: str
    client_session: str
    seen_at: str | None = None  # when the session did it, ISO 8601 (None: now)
    files: Sequence[str] | None = None
    sources: Sequence[str] | None = None  # the untrusted input the session had read


@dataclass(frozen=True, slots=True)
class QueuedDraft:
    """A draft checked against every input rule, ready for the queue."""

    kind: str
    text: str
    source_repo: str
    client: str
    client_session: str
    seen_at: datetime | None
    files: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def fingerprint(self) -> str:
        """The same finding (its text, of its kind, for its repository): queued once,
        whichever session showed it (a live session's hooks, then its transcript read
        again), and whatever its status since (a dropped draft stays dropped)."""
        key = "\x1f".join((self.source_repo, self.kind, self.text))
        return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class DraftEntry:
    """A draft in the queue, as a person reviews it."""

    id: UUID
    kind: str
    text: str
    files: tuple[str, ...]
    source_repo: str
    client: str
    client_session: str
    seen_at: datetime
    sources: tuple[str, ...]
    status: str
    queued_at: datetime
    decided_at: datetime | None
    memory_id: UUID | None


def queued_draft(draft: HistoryDraftText) -> QueuedDraft:
    """Every rule a queued draft's fields obey, each once: the live draft's text and files,
    a repository as a memory names one, a known client and kind, sources as a session keeps
    them."""
    kind = one_of(draft.kind, "kind", DRAFT_KINDS, "")
    client = one_of(draft.client, "client", DRAFT_CLIENTS, "")
    text = draft_of(DraftText(draft.text, draft.files))
    repo = clean_line(draft.source_repo, "source_repo", max_chars=FIELD_CHARS["source_repo"])
    if repo is None:
        raise InvalidInputError(
            "source_repo must name the session's repository", field="source_repo"
        )
    session = clean_line(draft.client_session, "client_session", max_chars=SESSION_ID_CHARS)
    if session is None:
        raise InvalidInputError("client_session must not be empty", field="client_session")
    seen_at = None
    if draft.seen_at is not None:
        try:
            seen_at = datetime.fromisoformat(draft.seen_at)
        except (TypeError, ValueError):
            raise InvalidInputError("seen_at must be an ISO 8601 time", field="seen_at") from None
        if seen_at.tzinfo is None:
            seen_at = seen_at.replace(tzinfo=UTC)
    return QueuedDraft(
        kind=kind,
        text=text.text,
        source_repo=repo,
        client=client,
        client_session=session,
        seen_at=seen_at,
        files=text.files,
        sources=clean_sources(draft.sources or ()),
    )
