"""The JSON bodies the API answers, built from the services' values. MCP answers the same
objects for the tools that return rows (search, hints, prune); its short write answers are
app/mcp/briefs.py."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.domain.compact import compact_hits, pack
from app.domain.fields import fields_of
from app.domain.memory import Memory, StoreOutcome
from app.domain.sessions import Session

if TYPE_CHECKING:
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
    git_branch: str | None
    git_commit: str | None
    files: list[str]
    stale_since: datetime | None = Field(
        description="Set when a file it is about changed since it was written (possibly"
        " stale: verify before relying on it, then confirm or supersede it)."
    )
    stale_reason: dict[str, Any] | None = Field(
        description='What changed: {"file": ..., "commit": ...}.'
    )

    @classmethod
    def of(cls, memory: Memory) -> MemoryOut:
        state = "ready" if memory.has_embedding else "pending"
        return cls(**fields_of(memory, cls, "embedding_state"), embedding_state=state)


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
    git_branch: str | None = None
    git_commit: str | None = None


class CaptureSettings(BaseModel):
    capture_mode: str
    silent_capture_budget: int
    tip: str


class SessionStartOut(BaseModel):
    session_id: UUID
    session: SessionOut
    pruning: PruneOut | None = Field(description="null when pruning failed; the session started")
    capture: CaptureSettings
    marked_stale: int = Field(
        default=0, description="Memories about the changed files, now marked possibly stale."
    )


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
    session: Session, pruning: PruneReport | None, capture: dict[str, Any], marked_stale: int = 0
) -> SessionStartOut:
    return SessionStartOut(
        session_id=session.id,
        session=render_session(session),
        pruning=render_prune(pruning) if pruning else None,
        capture=CaptureSettings(**capture),
        marked_stale=marked_stale,
    )


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


class CompactHitOut(BaseModel):
    id: str
    type: str
    trust: str = Field(description="Who stands behind it: agent, user or system.")
    marks: list[str] = Field(
        description='"global" (filed under no repository), "possibly-stale" (a file it is'
        " about changed since: verify, then confirm or supersede it)."
    )
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
                marks=list(h.marks),
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


class ImportOut(BaseModel):
    memories: int = Field(description="Lines imported (the header not counted).")
    stored: int = Field(description="New memories.")
    reinforced: int = Field(description="Known content: reinforced, not duplicated.")
    reembedded: int = Field(description="Lines whose vectors this server's model made.")
    linked: int = Field(description="Supersede links restored.")
    unresolved_links: int = Field(description="Links to a memory neither in the file nor here.")
    sessions: int = Field(default=0, description="Sessions new here.")
    quarantined: int = Field(
        description="Lines kept quarantined: marked so in the file, or whose content does not"
        " match the content_hash they carry. No agent is handed them."
    )


def render_import(report: ImportReport) -> ImportOut:
    return ImportOut(**asdict(report))
