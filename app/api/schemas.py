"""Request and response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.domain.memory import KNOWN_MEMORY_TYPES, MEMORY_TYPE_PATTERN, Memory

TrustLevelField = Literal["user", "agent", "system"]
ConfidenceField = Literal["high", "medium", "low"]


class MemoryIn(BaseModel):
    """Only what a client may set: ids, hashes, counters and embeddings are the server's."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(description="The memory itself; required and non-empty.")
    memory_type: str = Field(
        default="general",
        pattern=MEMORY_TYPE_PATTERN,
        description=f"One of {', '.join(KNOWN_MEMORY_TYPES)}, or any other lower_snake_case name.",
    )
    category: str | None = Field(default=None, max_length=200)
    tags: list[str] = Field(default_factory=list)
    source_repo: str | None = Field(default=None, max_length=300)
    task_id: str | None = Field(default=None, max_length=300)
    trust_level: TrustLevelField = "agent"
    confidence: ConfidenceField = "medium"
    pinned: bool = False
    source: str = Field(default="api", max_length=100)
    name: str | None = Field(default=None, max_length=300)
    metadata: dict[str, Any] = Field(default_factory=dict)
    context: str | None = Field(
        default=None,
        description="The situation the memory came from (the task, the question it answers,"
        " the turn before it): searched with the memory, at a lower weight than its content,"
        " and returned with it. Not part of its identity: the same content in another context"
        " reinforces the stored memory, whose context stays.",
    )


class BatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memories: list[MemoryIn] = Field(min_length=1)


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
        return cls(
            id=memory.id,
            tenant_id=memory.tenant_id,
            content=memory.content,
            content_hash=memory.content_hash,
            memory_type=memory.memory_type,
            category=memory.category,
            tags=memory.tags,
            source_repo=memory.source_repo,
            task_id=memory.task_id,
            trust_level=memory.trust_level,
            confidence=memory.confidence,
            pinned=memory.pinned,
            source=memory.source,
            name=memory.name,
            metadata=memory.metadata,
            context=memory.context,
            observation_count=memory.observation_count,
            relevance_score=memory.relevance_score,
            access_count=memory.access_count,
            embedding_state="ready" if memory.has_embedding else "pending",
            superseded_by=memory.superseded_by,
            created_at=memory.created_at,
            updated_at=memory.updated_at,
            last_accessed_at=memory.last_accessed_at,
            archived_at=memory.archived_at,
            quarantined_at=memory.quarantined_at,
            created_by_key=memory.created_by_key,
            version=memory.version,
        )


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


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    q: str
    source_repo: str | None = None
    memory_type: list[str] | None = None
    tags: list[str] | None = None
    min_trust: TrustLevelField | None = None
    min_relevance: float | None = Field(default=None, ge=0.0, le=100.0)
    limit: int = Field(default=10, ge=1, le=100)
    alpha: float | None = Field(default=None, ge=0.0, le=1.0)
    include_archived: bool = False
    track_access: bool = True


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


class Problem(BaseModel):
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[dict[str, Any]] | None = None


class AttemptIn(BaseModel):
    step_index: int | None = None
    action: str | None = None
    result: Literal["success", "failure"]
    error: str | None = None


class StrategyLearnIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_description: str = Field(min_length=1, max_length=2_000)
    plan_steps: list[str] | None = Field(default=None, max_length=100)
    plan_summary: str | None = Field(default=None, max_length=20_000)
    attempt_history: list[AttemptIn] = Field(default_factory=list, max_length=500)
    total_attempts: int = Field(ge=0)
    quality_score: float
    files_changed: list[str] = Field(default_factory=list, max_length=500)
    model: str | None = Field(default=None, max_length=200)
    source_repo: str | None = Field(default=None, max_length=300)
    task_id: str | None = Field(default=None, max_length=300)


class StrategyLearnOut(BaseModel):
    status: Literal["stored", "reinforced", "skipped"]
    reason: str | None = None
    memory: MemoryOut | None = None


class HintOut(BaseModel):
    hint: str
    similarity: float
    strategy: MemoryOut | None


class FeedbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: Literal["helpful", "unhelpful"]


class RememberIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    source_repo: str | None = Field(default=None, max_length=300)
    category: str | None = Field(default=None, max_length=200)
    name: str | None = Field(default=None, max_length=300)
    reasoning: str | None = Field(default=None, max_length=5_000)
    # Checked by the service, so the answer carries the exact wording agents expect.
    confidence: str | None = None
    references: list[str] = Field(default_factory=list, max_length=50)
    context: str | None = Field(
        default=None, description="The task or situation the learning came from; searched."
    )


class RememberOut(BaseModel):
    status: Literal["stored", "reinforced"]
    message: str
    observation_count: int | None = None
    memory: MemoryOut


class FileIn(BaseModel):
    path: str = Field(max_length=1_000)
    content: str = Field(default="", max_length=1_000_000)


class DiagnosisIn(BaseModel):
    root_cause: str | None = None
    reason: str | None = None
    suggested_action: str | None = None


class RetryContextIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_description: str = Field(max_length=100_000)
    plan_summary: str = Field(default="", max_length=100_000)
    current_files: list[FileIn] = Field(default_factory=list, max_length=500)
    previous_files: list[FileIn] = Field(default_factory=list, max_length=500)
    validation_output: str = Field(default="", max_length=1_000_000)
    diagnosis: DiagnosisIn | None = None
    attempt_number: int = Field(default=1, ge=1)
    full_context_tokens: int | None = Field(default=None, ge=0)


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


class PruneIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool = False
    source_repo: str | None = None


class PruneOut(BaseModel):
    archived: dict[str, int]
    total_archived: int
    message: str
    dry_run: bool = False
    would_archive_ids: list[UUID] | None = None


class MemoryPatch(BaseModel):
    """Only these fields change in place; new content is a supersede."""

    model_config = ConfigDict(extra="forbid")

    tags: list[str] | None = None
    pinned: bool | None = None
    confidence: ConfidenceField | None = None
    category: str | None = Field(default=None, max_length=200)
    metadata: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _content_is_immutable(cls, data: Any) -> Any:
        if isinstance(data, dict) and "content" in data:
            raise ValueError(
                "content never changes in place: POST /memories/{id}/supersede with the new memory"
            )
        return data


class SupersedeOut(BaseModel):
    superseded: MemoryOut
    replacement: StoreOut


class SessionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source_repo: str | None = Field(default=None, max_length=300)
    agent: str | None = Field(default=None, max_length=200)
    task: str | None = Field(default=None, max_length=2_000)


class KeyChange(BaseModel):
    file: str = Field(max_length=1_000)
    action: str | None = Field(default=None, max_length=100)
    description: str | None = Field(default=None, max_length=1_000)


class SessionEndIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["completed", "failed"]
    summary: str | None = Field(default=None, max_length=10_000)
    key_changes: list[KeyChange] = Field(default_factory=list, max_length=100)


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


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    role: Literal["agent", "reader", "admin"]


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


class NewKeyOut(KeyOut):
    key: str = Field(description="Shown once; only its hash is stored.")
