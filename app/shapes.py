"""The JSON shapes both doors answer with the same body: a memory, a stored memory, search
results, a strategy hint or lesson, a prune report. REST-only bodies are in
app/api/responses.py, MCP's short write answers in app/mcp/briefs.py."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.domain.fields import fields_of
from app.domain.memory import Memory, StoreOutcome
from app.domain.transfer import ExportedMemory

if TYPE_CHECKING:
    from app.services.learning import Hint, LearnResult
    from app.services.lifecycle import PruneReport
    from app.services.search import SearchResponse


class MemoryOut(ExportedMemory):
    """A memory as both doors show it: what it exports (ExportedMemory), with what every
    stored memory has where an imported line may not, and what is shown but not exported."""

    # Every field is in every answer: the defaults are the import's, not optional output.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    id: UUID
    content_hash: str
    created_at: datetime
    source: str
    tenant_id: str
    embedding_state: Literal["ready", "pending"]
    updated_at: datetime
    archived_by_admin: bool = Field(
        default=False,
        description="Archived by an admin's hand: no agent's re-store brings it back.",
    )
    created_by_key: UUID | None = Field(description="The API key that wrote it (provenance).")
    person_id: UUID | None = Field(
        default=None, description="The person whose key wrote it (none: a key of no one)."
    )
    version: int = Field(
        description='Bumped by every edit; send it back as If-Match: "v<version>".'
    )
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
    merged: bool = Field(
        default=False,
        description="Reinforced as a near-duplicate: `memory` is the one it nearly repeats.",
    )
    may_supersede: UUID | None = Field(
        default=None,
        description="Stored, and it may contradict this live memory: supersede that one if"
        " this replaces it (the service never does on its own).",
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


class PruneOut(BaseModel):
    archived: dict[str, int]
    total_archived: int
    message: str
    dry_run: bool = False
    would_archive_ids: list[UUID] | None = None


class CaptureSettings(BaseModel):
    capture_mode: str
    silent_capture_budget: int
    tip: str


def render_store(outcome: StoreOutcome) -> StoreOut:
    return StoreOut(
        status=outcome.status,
        memory=MemoryOut.of(outcome.memory),
        merged=outcome.merged,
        may_supersede=outcome.may_supersede,
    )


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


def render_learned(result: LearnResult) -> StrategyLearnOut:
    memory = MemoryOut.of(result.memory) if result.memory else None
    return StrategyLearnOut(status=result.status, reason=result.reason, memory=memory)


def render_hint(hint: Hint) -> HintOut:
    strategy = MemoryOut.of(hint.strategy) if hint.strategy else None
    return HintOut(hint=hint.hint, similarity=hint.similarity, strategy=strategy)
