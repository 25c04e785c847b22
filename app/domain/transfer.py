"""Export and import: a tenant's memories as JSON lines, one header line then one line per
memory, and the rules an imported line must pass before anything is written."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.domain.errors import InvalidInputError
from app.domain.fields import WritableMemory, by_name, fields_of
from app.domain.filters import FilterRequest, MemoryFilter, memory_filter
from app.domain.inputs.mappings import from_mapping
from app.domain.inputs.memories import MemoryRequest, new_memory
from app.domain.memory import Memory, NewMemory
from app.domain.provenance import clean_provenance, reasons_of
from app.domain.sessions import (
    KeyChange,
    Session,
    SessionEnd,
    SessionRequest,
    session_draft,
    session_end,
)
from app.domain.validation import Limits, number_in

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
EXPORT_FORMAT = "agent-memory/export"
EXPORT_VERSION = 1
# Counters and scores an imported line may carry: wide enough for any real history.
MAX_COUNT = 1_000_000_000
MAX_RELEVANCE = 10.0


@dataclass(frozen=True, slots=True)
class ExportRequest:
    # A repository's memories only (never the global ones), stored in [since, until); the
    # rest of the filter is the export's own.
    filter: FilterRequest = field(default_factory=FilterRequest)
    embeddings: bool = False


@dataclass(frozen=True, slots=True)
class ExportQuery:
    source_repo: str | None
    embeddings: bool
    filter: MemoryFilter


@dataclass(frozen=True, slots=True)
class ExportHeader:
    """The first line of an export: what the file holds and which model made its vectors."""

    tenant_id: str
    source_repo: str | None
    count: int
    embedding_model: str | None
    dimensions: int | None
    exported_at: datetime
    sessions: int = 0
    format: str = EXPORT_FORMAT
    version: int = EXPORT_VERSION


@dataclass(frozen=True, slots=True)
class MemoryState:
    """What a memory's life has added to it, carried over by an import."""

    observation_count: int = 1
    relevance_score: float = 1.0
    access_count: int = 0
    last_accessed_at: datetime | None = None
    archived_at: datetime | None = None
    quarantined_at: datetime | None = None
    created_at: datetime | None = None
    # Held for a person when exported, and why: an import never releases a hold.
    held_at: datetime | None = None
    provenance: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ImportRequest:
    """One line of an export as a door parsed it."""

    memory: MemoryRequest
    state: MemoryState
    id: UUID | None = None
    superseded_by: UUID | None = None
    embedding: Sequence[float] | None = None
    content_hash: str | None = None


@dataclass(frozen=True, slots=True)
class ImportedMemory:
    new: NewMemory
    state: MemoryState
    source_id: UUID | None
    superseded_by: UUID | None
    # The file's vector when it was made by this server's model; otherwise re-embedded.
    embedding: list[float] | None
    # The hash the exporting server stored (None in a hand-written file): the database
    # quarantines the line when its content no longer matches.
    content_hash: str | None = None


def export_query(request: ExportRequest, limits: Limits, with_quarantined: bool) -> ExportQuery:
    """Every memory of the tenant, or of one repository (not the global ones), archived and
    superseded ones too, quarantined ones only `with_quarantined`, stored in the window."""
    kept = memory_filter(
        replace(
            request.filter,
            include_archived=True,
            include_quarantined=with_quarantined,
            scope="repo",
        ),
        limits,
    )
    return ExportQuery(
        kept.source_repo,
        bool(request.embeddings),
        replace(kept, include_superseded=True),
    )


def usable_vectors(header: ExportHeader, model: str, dimensions: int) -> bool:
    """Whether the file's vectors can be kept as they are: same model, same size."""
    return header.embedding_model == model and header.dimensions == dimensions


def import_header(header: ExportHeader) -> ExportHeader:
    if header.format != EXPORT_FORMAT:
        raise InvalidInputError(
            f"the first line is not an agent-memory export header (format '{header.format[:40]}')",
            field="header.format",
        )
    if header.version != EXPORT_VERSION:
        raise InvalidInputError(
            f"this file is export version {header.version}; this server reads version"
            f" {EXPORT_VERSION}",
            field="header.version",
        )
    return header


def _aware(value: datetime | None, field: str) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise InvalidInputError(f"{field} needs a time zone (ISO 8601 with offset)", field=field)
    return value


def _count(value: int, field: str, low: int) -> int:
    return int(number_in(value, field, low, MAX_COUNT))


def imported_memory(
    request: ImportRequest, limits: Limits, dimensions: int | None
) -> ImportedMemory:
    """One line's memory, or the reason it cannot be imported. `dimensions`: the size of
    the file's vectors when they are kept, None when every line is re-embedded."""
    state = request.state
    checked = MemoryState(
        observation_count=_count(state.observation_count, "observation_count", 1),
        relevance_score=number_in(state.relevance_score, "relevance_score", 0.0, MAX_RELEVANCE),
        access_count=_count(state.access_count, "access_count", 0),
        last_accessed_at=_aware(state.last_accessed_at, "last_accessed_at"),
        archived_at=_aware(state.archived_at, "archived_at"),
        quarantined_at=_aware(state.quarantined_at, "quarantined_at"),
        created_at=_aware(state.created_at, "created_at"),
        held_at=_aware(state.held_at, "held_at"),
        provenance=clean_provenance(state.provenance),
    )
    embedding = None
    if dimensions is not None and request.embedding is not None:
        if len(request.embedding) != dimensions:
            raise InvalidInputError(
                f"embedding has {len(request.embedding)} dimensions; the header says {dimensions}",
                field="embedding",
            )
        if not all(math.isfinite(x) for x in request.embedding):
            raise InvalidInputError("embedding holds a value that is not finite", field="embedding")
        embedding = [float(x) for x in request.embedding]
    if request.superseded_by is not None and request.superseded_by == request.id:
        raise InvalidInputError("a memory cannot supersede itself", field="superseded_by")
    content_hash = request.content_hash
    if content_hash is not None and not _SHA256_HEX.fullmatch(str(content_hash)):
        raise InvalidInputError(
            "content_hash must be 64 hex digits (SHA-256)", field="content_hash"
        )
    return ImportedMemory(
        new_memory(request.memory, limits),
        checked,
        request.id,
        request.superseded_by,
        embedding,
        content_hash,
    )


def held_if_dangerous(state: MemoryState, reason: str | None) -> MemoryState:
    """An imported line telling an agent to run downloaded code or send data out
    (`reason`: what dangerous_instruction() found) is held, as a stored one is, whatever
    the file says of it."""
    if reason is None or state.held_at is not None:
        return state
    reasons = [*reasons_of(state.provenance), reason]
    provenance = {**(state.provenance or {}), "reasons": list(dict.fromkeys(reasons))}
    return replace(state, held_at=datetime.now(UTC), provenance=provenance)


def at_line(line: int, error: InvalidInputError) -> InvalidInputError:
    """The same refusal, naming the line of the file it came from."""
    field = f"lines.{line}.{error.field}" if error.field else f"lines.{line}"
    return InvalidInputError(f"line {line}: {error.detail}", field=field)


# The lines of the file: an export writes them, an import reads them back.


class ExportHeaderLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str
    version: int
    tenant_id: str | None = None
    source_repo: str | None = None
    count: int | None = Field(default=None, description="Memories in the file.")
    sessions: int | None = Field(default=None, description="Sessions in the file, after them.")
    embedding_model: str | None = Field(
        default=None, description="The model that made the vectors; null when there are none."
    )
    dimensions: int | None = None
    exported_at: datetime | None = None

    @classmethod
    def of(cls, header: ExportHeader) -> ExportHeaderLine:
        return cls(**asdict(header))

    def header(self) -> ExportHeader:
        return ExportHeader(
            tenant_id=self.tenant_id or "",
            source_repo=self.source_repo,
            count=self.count or 0,
            embedding_model=self.embedding_model,
            dimensions=self.dimensions,
            exported_at=self.exported_at or datetime.now(UTC),
            sessions=self.sessions or 0,
            format=self.format,
            version=self.version,
        )


class ExportedMemory(WritableMemory):
    """A memory's exported fields (EXPORTED_FIELDS): what a writer may set (WritableMemory)
    and its history. An export line (MemoryRecord) and a memory as both doors show it
    (MemoryOut, app/shapes.py) are this and more. The defaults are what an imported line
    may leave out."""

    id: UUID | None = None
    source: str = "import"
    observation_count: int = 1
    relevance_score: float = 1.0
    access_count: int = 0
    last_accessed_at: datetime | None = None
    archived_at: datetime | None = None
    quarantined_at: datetime | None = Field(
        default=None, description="Set when the content was found altered behind the API's back."
    )
    created_at: datetime | None = None
    held_at: datetime | None = Field(
        default=None,
        description="Set while it waits for a person's approval before it is handed over"
        " unasked (written after untrusted input, or telling an agent to run downloaded code"
        " or send data out).",
    )
    provenance: dict[str, Any] | None = Field(
        default=None,
        description="Why it was held or marked (`reasons`) and the untrusted sources its"
        " session read (`sources`: URLs, `tool:<name>`).",
    )
    superseded_by: UUID | None = None
    # The hash the memory's writer stored: an import quarantines a line whose content no
    # longer matches it (altered in the file, or before the export).
    content_hash: str | None = None


class MemoryRecord(ExportedMemory):
    """One memory as a line of an export: what a client may set, plus its history."""

    model_config = ConfigDict(extra="forbid")

    embedding: list[float] | None = None

    @classmethod
    def of(cls, memory: Memory, embedding: list[float] | None) -> MemoryRecord:
        return cls(**fields_of(memory, cls, "embedding"), embedding=embedding)

    def line(self) -> str:
        exclude = None if self.embedding is not None else {"embedding"}
        return self.model_dump_json(exclude=exclude) + "\n"

    def request(self) -> ImportRequest:
        return ImportRequest(
            by_name(MemoryRequest, self),
            by_name(MemoryState, self),
            self.id,
            self.superseded_by,
            self.embedding,
            self.content_hash,
        )


class SessionLine(BaseModel):
    """One session as a line of an export (after the memories): {"session": {...}}."""

    model_config = ConfigDict(extra="forbid")

    id: UUID
    source_repo: str | None = None
    agent: str | None = None
    task: str | None = None
    status: str = "completed"
    summary: str | None = None
    key_changes: list[dict[str, Any]] = Field(default_factory=list)
    started_at: datetime
    ended_at: datetime | None = None
    git_branch: str | None = None
    git_commit: str | None = None


class SessionRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session: SessionLine

    @classmethod
    def of(cls, session: Session) -> SessionRecord:
        return cls(session=SessionLine(**asdict(session)))

    def line(self) -> str:
        return self.model_dump_json() + "\n"


def imported_session(line: SessionLine) -> Session:
    """A session line as this server will hold it, or the reason it cannot be imported."""
    ending = session_end(
        SessionEnd(
            status=line.status if line.status != "active" else "abandoned",
            summary=line.summary,
            key_changes=[from_mapping(KeyChange, c, "key_changes") for c in line.key_changes],
        )
    )
    start = session_draft(
        SessionRequest(line.source_repo, line.agent, line.task, line.git_branch, line.git_commit)
    )
    return Session(
        id=line.id,
        source_repo=start.source_repo,
        agent=start.agent,
        task=start.task,
        status=ending.status,
        summary=ending.summary,
        key_changes=[
            {k: v for k, v in asdict(c).items() if v is not None} for c in ending.key_changes
        ],
        started_at=_aware(line.started_at, "started_at") or line.started_at,
        ended_at=_aware(line.ended_at, "ended_at") or line.started_at,
        git_branch=start.git_branch,
        git_commit=start.git_commit,
    )
