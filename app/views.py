"""What every door renders: the JSON shapes of memories, search results, sessions and
the rest, and the functions that build them from the services' values. REST returns them
as response bodies; MCP returns the same objects as tool results."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.domain.compact import CompactHit, age, pack
from app.domain.errors import AppError
from app.domain.inputs import MemoryDraft
from app.domain.memory import Memory, StoreOutcome
from app.domain.transfer import ExportHeader, ImportDraft, MemoryState
from app.repository.sessions import Session

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from app.services.learning import Hint, LearnResult, RememberResult
    from app.services.lifecycle import PruneReport
    from app.services.search import SearchResponse
    from app.services.transfer import ImportReport


class MemoryOut(BaseModel):
    id: UUID
    tenant_id: str
    content: str
    content_hash: str
    memory_type: str
    category: str | None
    tags: list[str]
    source_repo: str | None
    task_id: str | None
    trust_level: str
    confidence: str
    pinned: bool
    source: str
    name: str | None
    metadata: dict[str, Any]
    context: str | None
    observation_count: int
    relevance_score: float
    access_count: int
    embedding_state: Literal["ready", "pending"]
    superseded_by: UUID | None
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None
    archived_at: datetime | None
    quarantined_at: datetime | None = Field(
        description="Set when the content was found altered behind the API's back."
    )
    created_by_key: UUID | None = Field(description="The API key that wrote it (provenance).")
    version: int = Field(
        description='Bumped by every edit; send it back as If-Match: "v<version>".'
    )

    @classmethod
    def of(cls, memory: Memory) -> MemoryOut:
        state = "ready" if memory.has_embedding else "pending"
        return cls(**fields_of(memory, cls, "embedding_state"), embedding_state=state)


def fields_of(memory: Memory, shape: type[BaseModel], *besides: str) -> dict[str, Any]:
    """The memory's own values for a shape's fields (all but `besides`), by name."""
    return {name: getattr(memory, name) for name in shape.model_fields if name not in besides}


T = TypeVar("T", bound="DataclassInstance")


def by_name(kind: type[T], source: Any) -> T:
    """A `kind` dataclass of `source`'s values for its fields, taken by name."""
    return kind(**{f.name: getattr(source, f.name) for f in dataclasses.fields(kind)})


class StoreOut(BaseModel):
    status: Literal["stored", "reinforced"]
    memory: MemoryOut


class BatchOut(BaseModel):
    results: list[StoreOut]


class MemoryPage(BaseModel):
    memories: list[MemoryOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )


class SearchResultOut(BaseModel):
    memory: MemoryOut
    score: float = Field(description="Rank order: similarity adjusted by decay.")
    similarity: float = Field(description="alpha * vector_similarity + (1 - alpha) * keyword")
    vector_similarity: float = Field(description="Cosine similarity, 0 if not a vector hit.")
    keyword_score: float = Field(description="BM25-style keyword rank / best in this query.")
    decayed_score: float = Field(description="similarity * retention (forgetting curve).")


class SearchOut(BaseModel):
    results: list[SearchResultOut]
    alpha: float = Field(description="The alpha used (0 when degraded to keyword-only).")
    took_ms: float
    degraded: str | None = Field(
        default=None, description="Set when the search ran with one side only, and why."
    )
    truncated: str | None = Field(
        default=None, description="Set when only the query's first distinct words were searched."
    )
    below_floor: int = Field(
        default=0,
        description="Matches left out for scoring far below the best (floor=false keeps them).",
    )
    note: str | None = Field(
        default=None, description='How the results were chosen when not ranked ("most recent").'
    )


class Problem(BaseModel):
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[dict[str, Any]] | None = None


class StrategyLearnOut(BaseModel):
    status: Literal["stored", "reinforced", "skipped"]
    reason: str | None = None
    memory: MemoryOut | None = None


class HintOut(BaseModel):
    hint: str
    similarity: float
    strategy: MemoryOut | None


class RememberOut(BaseModel):
    status: Literal["stored", "reinforced"]
    message: str
    observation_count: int | None = None
    memory: MemoryOut


class FileDeltaOut(BaseModel):
    path: str
    diff: str


class RetryContextOut(BaseModel):
    task_summary: str
    plan_summary: str
    latest_error: str
    changed_files: list[FileDeltaOut]
    diagnosis: dict[str, Any] | None
    attempt_number: int
    estimated_tokens: int
    saved_tokens: int
    saved_percent: float


class PruneOut(BaseModel):
    archived: dict[str, int]
    total_archived: int
    message: str
    dry_run: bool = False
    would_archive_ids: list[UUID] | None = None


class SupersedeOut(BaseModel):
    superseded: MemoryOut
    replacement: StoreOut


class SessionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: UUID
    source_repo: str | None
    agent: str | None
    task: str | None
    status: str
    summary: str | None
    key_changes: list[dict[str, Any]]
    started_at: datetime
    ended_at: datetime | None


class CaptureSettings(BaseModel):
    capture_mode: str
    silent_capture_budget: int
    tip: str


class SessionStartOut(BaseModel):
    session_id: UUID
    session: SessionOut
    pruning: PruneOut | None = Field(description="null when pruning failed; the session started")
    capture: CaptureSettings


class KeyOut(BaseModel):
    """An API key's record; never the key itself."""

    model_config = ConfigDict(from_attributes=True)

    id: UUID
    tenant_id: str
    name: str
    role: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None


class RevokedKeyOut(KeyOut):
    note: str | None = Field(
        default=None, description="What the revocation leaves (the tenant's last admin key)"
    )


class NewKeyOut(KeyOut):
    key: str = Field(description="Shown once; only its hash is stored.")


def render_store(outcome: StoreOutcome) -> StoreOut:
    return StoreOut(status=outcome.status, memory=MemoryOut.of(outcome.memory))


def render_search(response: SearchResponse) -> SearchOut:
    return SearchOut(
        results=[
            SearchResultOut(
                memory=MemoryOut.of(hit.memory),
                score=hit.score,
                similarity=hit.similarity,
                vector_similarity=hit.vector_similarity,
                keyword_score=hit.keyword_score,
                decayed_score=hit.decayed_score,
            )
            for hit in response.hits
        ],
        alpha=response.alpha,
        took_ms=response.took_ms,
        degraded=response.degraded,
        truncated=response.truncated,
        below_floor=response.below_floor,
        note=response.note,
    )


def render_prune(report: PruneReport) -> PruneOut:
    return PruneOut(
        archived=report.archived,
        total_archived=report.total_archived,
        message=report.message,
        dry_run=report.dry_run,
        would_archive_ids=report.ids if report.dry_run else None,
    )


def render_session(session: Session) -> SessionOut:
    return SessionOut.model_validate(session)


def render_session_start(
    session: Session, pruning: PruneReport | None, capture: dict[str, Any]
) -> SessionStartOut:
    return SessionStartOut(
        session_id=session.id,
        session=render_session(session),
        pruning=render_prune(pruning) if pruning else None,
        capture=CaptureSettings(**capture),
    )


# What MCP tools answer an agent after a write: the outcome in a line, not the row echoed
# back (the agent just sent it), so that each call costs tens of tokens, not hundreds.


class StoredBrief(BaseModel):
    status: Literal["stored", "reinforced"]
    message: str
    id: UUID
    observation_count: int


def store_message(outcome: StoreOutcome) -> str:
    memory = outcome.memory
    label = f"{memory.name or memory.content[:60]} ({memory.category or memory.memory_type})"
    if outcome.status == "stored":
        return f"Stored: {label}"
    return f"Reinforced: {label} — observation count incremented"


def render_store_brief(outcome: StoreOutcome) -> StoredBrief:
    memory = outcome.memory
    return StoredBrief(
        status=outcome.status,
        message=store_message(outcome),
        id=memory.id,
        observation_count=memory.observation_count,
    )


class SessionStartBrief(BaseModel):
    session_id: UUID
    pruning: str | None = Field(description="What the start's pruning did; null if it failed.")
    capture: CaptureSettings


def render_session_start_brief(
    session: Session, pruning: PruneReport | None, capture: dict[str, Any]
) -> SessionStartBrief:
    return SessionStartBrief(
        session_id=session.id,
        pruning=pruning.message if pruning else None,
        capture=CaptureSettings(**capture),
    )


class SessionEndBrief(BaseModel):
    session_id: UUID
    status: str
    ended_at: datetime | None


def render_session_end_brief(session: Session) -> SessionEndBrief:
    return SessionEndBrief(session_id=session.id, status=session.status, ended_at=session.ended_at)


def render_remember(result: RememberResult) -> RememberOut:
    reinforced = result.outcome.status == "reinforced"
    return RememberOut(
        status=result.outcome.status,
        message=result.message,
        observation_count=result.outcome.memory.observation_count if reinforced else None,
        memory=MemoryOut.of(result.outcome.memory),
    )


def render_learned(result: LearnResult) -> StrategyLearnOut:
    memory = MemoryOut.of(result.memory) if result.memory else None
    return StrategyLearnOut(status=result.status, reason=result.reason, memory=memory)


def render_hint(hint: Hint) -> HintOut:
    strategy = MemoryOut.of(hint.strategy) if hint.strategy else None
    return HintOut(hint=hint.hint, similarity=hint.similarity, strategy=strategy)


def problem_of(error: AppError) -> dict[str, Any]:
    """RFC 9457 problem details for a typed error (REST adds `type` and `instance`)."""
    body: dict[str, Any] = {"title": error.title, "status": error.status, "detail": error.detail}
    if error.field:
        body["errors"] = [{"field": error.field, "message": error.detail}]
    return body


def invalid_input_problem(errors: Sequence[Any]) -> dict[str, Any]:
    """A parse failure (pydantic's errors) as one 422 naming every field."""
    listed = [{"field": _field_of(tuple(e["loc"])), "message": e["msg"]} for e in errors]
    fields = ", ".join(dict.fromkeys(e["field"] for e in listed))
    return {
        "title": "Unprocessable Content",
        "status": 422,
        "detail": f"invalid input: {fields}",
        "errors": listed,
    }


def _field_of(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


def compact_hits(response: SearchResponse, now: datetime) -> list[CompactHit]:
    return [
        CompactHit(
            id=str(hit.memory.id),
            type=hit.memory.memory_type,
            score=round(hit.score, 3),
            age=age(hit.memory.created_at, now),
            tags=tuple(hit.memory.tags),
            content=hit.memory.content,
            context=hit.memory.context,
            trust=hit.memory.trust_level,
        )
        for hit in response.hits
    ]


def render_compact_search(response: SearchResponse, now: datetime, max_tokens: int | None) -> str:
    """The text an agent reads: one header line, then each hit in its compact form."""
    packed = pack(compact_hits(response, now), max_tokens)
    notes = [f"{len(packed.lines)} result(s)"]
    if packed.left_out:
        notes.append(f"{packed.left_out} more left out to fit max_tokens={max_tokens}")
    if response.below_floor:
        notes.append(f"{response.below_floor} weaker match(es) below the relevance floor")
    for extra in (response.note, response.truncated, response.degraded):
        if extra:
            notes.append(extra)
    return "\n".join(["; ".join(notes), *packed.lines])


class CompactHitOut(BaseModel):
    id: str
    type: str
    trust: str = Field(description="Who stands behind it: agent, user or system.")
    score: float
    age: str = Field(description='How long ago it was stored: "45m", "3h", "2d", "5mo", "1y".')
    tags: list[str]
    content: str
    context: str | None = Field(description="Cut to what fits the compact size.")


class CompactSearchOut(BaseModel):
    results: list[CompactHitOut]
    left_out: int = Field(description="Matches left out to fit max_tokens.")
    below_floor: int
    note: str | None = None
    truncated: str | None = None
    degraded: str | None = None


def render_compact_json(
    response: SearchResponse, now: datetime, max_tokens: int | None
) -> CompactSearchOut:
    """The compact form as JSON (REST): the same hits and budget as the text form."""
    hits = compact_hits(response, now)
    packed = pack(hits, max_tokens)
    shown = hits[: len(packed.lines)]
    return CompactSearchOut(
        results=[
            CompactHitOut(
                id=h.id,
                type=h.type,
                trust=h.trust,
                score=h.score,
                age=h.age,
                tags=list(h.tags),
                content=h.content,
                context=h.cut_context(),
            )
            for h in shown
        ],
        left_out=packed.left_out,
        below_floor=response.below_floor,
        note=response.note,
        truncated=response.truncated,
        degraded=response.degraded,
    )


# Export and import: the same shapes are written by an export and read back by an import.


class ExportHeaderLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str
    version: int
    tenant_id: str | None = None
    source_repo: str | None = None
    count: int | None = Field(default=None, description="Memories in the file.")
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
            format=self.format,
            version=self.version,
        )


class MemoryRecord(BaseModel):
    """One memory as a line of an export: what a client may set, plus its history."""

    model_config = ConfigDict(extra="forbid")

    id: UUID | None = None
    content: str
    memory_type: str = "general"
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    source_repo: str | None = None
    task_id: str | None = None
    trust_level: str = "agent"
    confidence: str = "medium"
    pinned: bool = False
    source: str = "import"
    name: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    context: str | None = None
    observation_count: int = 1
    relevance_score: float = 1.0
    access_count: int = 0
    last_accessed_at: datetime | None = None
    archived_at: datetime | None = None
    quarantined_at: datetime | None = None
    created_at: datetime | None = None
    superseded_by: UUID | None = None
    # The hash the memory's writer stored: an import quarantines a line whose content no
    # longer matches it (altered in the file, or before the export).
    content_hash: str | None = None
    embedding: list[float] | None = None

    @classmethod
    def of(cls, memory: Memory, embedding: list[float] | None) -> MemoryRecord:
        return cls(**fields_of(memory, cls, "embedding"), embedding=embedding)

    def line(self) -> str:
        exclude = None if self.embedding is not None else {"embedding"}
        return self.model_dump_json(exclude=exclude) + "\n"

    def draft(self) -> ImportDraft:
        return ImportDraft(
            by_name(MemoryDraft, self),
            by_name(MemoryState, self),
            self.id,
            self.superseded_by,
            self.embedding,
            self.content_hash,
        )


class ImportOut(BaseModel):
    memories: int = Field(description="Lines imported (the header not counted).")
    stored: int = Field(description="New memories.")
    reinforced: int = Field(description="Known content: reinforced, not duplicated.")
    reembedded: int = Field(description="Lines whose vectors this server's model made.")
    linked: int = Field(description="Supersede links restored.")
    unresolved_links: int = Field(description="Links to a memory neither in the file nor here.")
    quarantined: int = Field(
        description="Lines kept quarantined: marked so in the file, or whose content does not"
        " match the content_hash they carry. No agent is handed them."
    )


def render_import(report: ImportReport) -> ImportOut:
    return ImportOut(**asdict(report))
