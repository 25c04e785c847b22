"""A session's drafts: what the hooks saw the agent learn (a failed command that a change
then fixed), kept beside the session, never as a memory: no search, snapshot or recall serves
one. The session's stop lists them for the agent to keep (one `remember`, rewritten as it
likes) or drop; what it still holds when it ends goes to the review queue below, for a
person. Few and short by construction."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from uuid import UUID

from agent_memory_client import protocol
from app.domain.errors import InvalidInputError
from app.domain.provenance import clean_sources
from app.domain.validation import (
    FIELD_CHARS,
    clean_line,
    clean_paths,
    clean_text,
    forbid_unknown,
    one_of,
)

# A draft's kinds, sources, evidence keys and bounds are the client half's, whose importers
# write them (agent_memory_client.protocol): named here for the server's modules.
DRAFT_KINDS = protocol.DRAFT_KINDS  # migration 0044 added "convention"
DRAFT_CLIENTS = protocol.DRAFT_CLIENTS
# A rule a person wrote in a file agents read (`agent-memory import-files`): its
# client_session names the file, its evidence the lines (migration 0047).
FILE_CLIENT = protocol.FILE_CLIENT
DRAFT_CHARS = protocol.DRAFT_CHARS
DRAFT_KEY_CHARS = protocol.DRAFT_KEY_CHARS
EVIDENCE_KEYS = protocol.EVIDENCE_KEYS
EVIDENCE_CHARS = protocol.EVIDENCE_CHARS

MAX_DRAFTS = 3  # a session keeps its newest three
DRAFT_FILES = 10


@dataclass(frozen=True, slots=True)
class DraftText:
    """A draft as a hook sends it (the text and the files it is about, what showed it, the
    client's key for the same lesson), before its rules."""

    text: str
    files: Sequence[str] | None = None
    evidence: Mapping[str, str | None] | None = None  # EVIDENCE_KEYS
    key: str | None = None


@dataclass(frozen=True, slots=True)
class Draft:
    text: str
    files: tuple[str, ...] = ()
    evidence: Mapping[str, str] = field(default_factory=dict)
    key: str | None = None


def draft_of(draft: DraftText) -> Draft:
    text = clean_text(draft.text, "text", max_chars=DRAFT_CHARS)
    if not text:
        raise InvalidInputError("text must not be empty", field="text")
    return Draft(
        text=text,
        files=clean_paths(draft.files, "files", DRAFT_FILES),
        evidence=evidence_of(draft.evidence),
        key=clean_line(draft.key, "key", max_chars=DRAFT_KEY_CHARS),
    )


# --- The review queue: drafts a person keeps, edits or drops (migration 0041) -------------
# A draft there comes from an agent's past session (`agent-memory import-history` read it
# from the client's transcripts) or from a session that ended holding it. It is never a
# memory by itself: nothing searches it, nothing hands it to an agent.

DRAFT_STATUSES = ("pending", "kept", "dropped")
MAX_QUEUED_A_CALL = 100  # drafts one import call sends
MAX_QUEUE_PAGE = 100
SESSION_ID_CHARS = 200

# A draft's evidence (migration 0044): what the session showed, so that a person judges the
# draft at a glance. Each a text of at most EVIDENCE_CHARS, cleaned as a draft's text is;
# the keys are EVIDENCE_KEYS and no other, each with its label as the queue shows it.
EVIDENCE_LABELS = {
    "error": "error",  # a fix: the real error line(s) the failure met
    "failed": "failed",  # a fix: the command that failed
    "change": "changed",  # a fix: the files and the change, or the command run to fix it
    "command": "passes now",  # a fix: the command that passes now
    "said": "the user said",  # an instruction: the user's words it comes from
    "shown": "shown by",  # a convention: the commands or words that show it
    "distilled_by": "written by",  # the person's own agent CLI that wrote the lesson
    "written": "written in",  # a rule of a file: the file(s) and line(s) it is written at
}
# The category a kept draft of a kind is filed under (the others' is inferred from their
# text, as any learning's): a convention kept is one of the project's conventions.
KEPT_CATEGORY = {"convention": "conventions"}


@dataclass(frozen=True, slots=True)
class HistoryDraftText:
    """A draft as an importer sends it, before its rules."""

    kind: str
    text: str
    source_repo: str | None  # None: a person's own file's (FILE_CLIENT only)
    client: str
    client_session: str
    seen_at: str | None = None  # when the session did it, ISO 8601 (None: now)
    files: Sequence[str] | None = None
    sources: Sequence[str] | None = None  # the untrusted input the session had read
    evidence: Mapping[str, str | None] | None = None  # EVIDENCE_KEYS
    key: str | None = None  # the client's own key for the same lesson (fingerprint)
    # The importer's ask that it be the person's own (a rule of their own file): where the
    # key acts for a person (offered_personal).
    personal: bool = False


@dataclass(frozen=True, slots=True)
class QueuedDraft:
    """A draft checked against every input rule, ready for the queue."""

    kind: str
    text: str
    source_repo: str | None
    client: str
    client_session: str
    seen_at: datetime | None
    files: tuple[str, ...]
    sources: tuple[str, ...]
    evidence: Mapping[str, str] = field(default_factory=dict)  # in EVIDENCE_KEYS' order
    key: str | None = None
    personal: bool = False  # asked for by the importer; offered_personal() decides
    personal_to: UUID | None = None  # the person it is offered to as their own

    @property
    def fingerprint(self) -> str:
        """The same finding, for its repository and of its kind: queued once, whichever
        session showed it (a live session's hooks, then its transcript read again), and
        whatever its status since (a dropped draft stays dropped). The finding is the
        client's key when it sent one (one lesson seen in many sessions, each in its own
        words), else the text. The two never meet: a text holds no \\x1f, and a key's form
        has one part more. A draft of no repository's is "" there (no repository is)."""
        parts = (self.kind, "", self.key) if self.key is not None else (self.kind, self.text)
        repo = self.source_repo or ""
        # A person's own draft is theirs: another's of the same text is another draft.
        if self.personal_to is not None:
            repo = f"{repo}\x1e{self.personal_to}"
        return hashlib.sha256("\x1f".join((repo, *parts)).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class DraftEntry:
    """A draft in the queue, as a person reviews it."""

    id: UUID
    kind: str
    text: str
    files: tuple[str, ...]
    source_repo: str | None  # None: a person's own file's
    client: str
    client_session: str
    seen_at: datetime
    sources: tuple[str, ...]
    status: str
    queued_at: datetime
    decided_at: datetime | None
    memory_id: UUID | None
    evidence: Mapping[str, str] = field(default_factory=dict)  # in EVIDENCE_KEYS' order
    key: str | None = None
    personal: bool = False  # its person's own: only they see it, and keep it as theirs

    def evidence_lines(self) -> list[tuple[str, str]]:
        """Its evidence as a person reads it: (label, text), in EVIDENCE_KEYS' order."""
        return [(EVIDENCE_LABELS[k], self.evidence[k]) for k in EVIDENCE_KEYS if k in self.evidence]


def evidence_of(value: Mapping[str, str | None] | None, name: str = "evidence") -> dict[str, str]:
    """A draft's evidence: only EVIDENCE_KEYS (another is refused, named: `evidence.foo`),
    each a text as a draft's is, at most EVIDENCE_CHARS; a blank or null one left out. In
    EVIDENCE_KEYS' order, whatever order it came in (a JSON object has none)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{name} must be an object", field=name)
    forbid_unknown(value, EVIDENCE_KEYS, name)
    kept: dict[str, str] = {}
    for key in EVIDENCE_KEYS:
        sent = value.get(key)
        if sent is not None:
            text = clean_text(sent, f"{name}.{key}", max_chars=EVIDENCE_CHARS)
            if text:
                kept[key] = text
    return kept


def queued_draft(draft: HistoryDraftText) -> QueuedDraft:
    """Every rule a queued draft's fields obey, each once: the live draft's text and files,
    a repository as a memory names one, a known client and kind, sources as a session keeps
    them, its evidence, and its key on one line."""
    kind = one_of(draft.kind, "kind", DRAFT_KINDS, "")
    client = one_of(draft.client, "client", DRAFT_CLIENTS, "")
    text = draft_of(DraftText(draft.text, draft.files, draft.evidence, draft.key))
    repo = clean_line(draft.source_repo, "source_repo", max_chars=FIELD_CHARS["source_repo"])
    # Of no repository (null, never blank): only a rule of a person's own file.
    if repo is None and (draft.source_repo is not None or client != FILE_CLIENT):
        raise InvalidInputError(
            "source_repo must name the session's repository (null only for a rule of a"
            " person's own file)",
            field="source_repo",
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
        evidence=text.evidence,
        key=text.key,
        personal=bool(draft.personal),
    )


def offered_personal(draft: QueuedDraft, person_id: UUID | None) -> QueuedDraft:
    """A draft queued by a person's key is offered as theirs alone when it is a standing
    instruction from their own prompts, or a rule of their own file (the importer asks);
    a fix and a repository's convention are the team's. A key of no one queues the team's."""
    if person_id is None or not (draft.personal or draft.kind == "instruction"):
        return dataclasses.replace(draft, personal=False)
    return dataclasses.replace(draft, personal=True, personal_to=person_id)


# --- The rules a person's files hold now (`agent-memory import-files`) --------------------
# Sent for a scope whose files were all read whole: a memory kept from a file's rule whose
# key is not among them was deleted from its file since, and is proposed for retirement.
MAX_WRITTEN_KEYS = 5_000
MAX_UNWRITTEN = 500  # drafts of rules no longer written, weighed a call


@dataclass(frozen=True, slots=True)
class WrittenText:
    """The rules a scope's files hold now, as the importer sends them."""

    source_repo: str | None  # None: a person's own files'
    keys: Sequence[str]


@dataclass(frozen=True, slots=True)
class Written:
    source_repo: str | None
    keys: tuple[str, ...]


def written_rules(sent: WrittenText) -> Written:
    """A repository as a memory names one (or none), and at most MAX_WRITTEN_KEYS keys,
    each a line as a draft's key is (each once)."""
    repo = clean_line(sent.source_repo, "source_repo", max_chars=FIELD_CHARS["source_repo"])
    if repo is None and sent.source_repo is not None:
        raise InvalidInputError(
            "source_repo must name a repository, or be null for a person's own files",
            field="source_repo",
        )
    if len(sent.keys) > MAX_WRITTEN_KEYS:
        raise InvalidInputError(f"keys holds at most {MAX_WRITTEN_KEYS}", field="keys")
    keys: dict[str, None] = {}
    for i, key in enumerate(sent.keys):
        cleaned = clean_line(key, f"keys.{i}", max_chars=DRAFT_KEY_CHARS)
        if cleaned is None:
            raise InvalidInputError("a key must not be empty", field=f"keys.{i}")
        keys.setdefault(cleaned)
    return Written(repo, tuple(keys))
