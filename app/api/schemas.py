"""REST request bodies: the shapes a client may send. Types only: every rule on the values
lives in app/domain and is applied by the services, the same for every door. The limits
shown in OpenAPI are read from the domain's table, so the docs cannot drift from the rule."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.api.examples import REPO, body
from app.domain.inputs import (
    ATTEMPT_RESULTS,
    CONFIDENCES,
    SESSION_STATUSES,
    Attempt,
    FileState,
    KeyChange,
    MemoryDraft,
    RememberDraft,
    RetryDraft,
    SearchDraft,
    SessionDraft,
    SessionEnd,
    StrategyAttempt,
    forbid_content_change,
)
from app.domain.keys import ROLES
from app.domain.memory import KNOWN_MEMORY_TYPES, TRUST_ORDER
from app.domain.validation import FIELD_CHARS, LIST_ITEMS, Limits

_DEFAULTS = Limits()


def documented(
    *,
    chars: str | int | None = None,
    items: str | int | None = None,
    choices: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """OpenAPI keywords for a rule the domain enforces (for clients and docs only)."""
    extra: dict[str, Any] = {}
    if chars is not None:
        extra["maxLength"] = FIELD_CHARS[chars] if isinstance(chars, str) else chars
    if items is not None:
        extra["maxItems"] = LIST_ITEMS[items] if isinstance(items, str) else items
    if choices is not None:
        extra["enum"] = list(choices)
    return extra


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemoryIn(Body):
    """Only what a client may set: ids, hashes, counters and embeddings are the server's."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body(
            {
                "content": "Run migrations in a release step, never at app start-up",
                "memory_type": "decision",
                "tags": ["deploy", "db"],
                "source_repo": REPO,
                "context": "Two pods raced on ALTER TABLE",
            }
        ),
    )

    content: str = Field(
        description="The memory itself; required and non-empty.",
        json_schema_extra=documented(chars=_DEFAULTS.max_content_chars),
    )
    memory_type: str = Field(
        default="general",
        description=f"One of {', '.join(KNOWN_MEMORY_TYPES)}, or any other lower_snake_case name.",
        json_schema_extra={"pattern": "^[a-z][a-z0-9_]{0,39}$"},
    )
    category: str | None = Field(default=None, json_schema_extra=documented(chars="category"))
    tags: list[str] = Field(
        default_factory=list, json_schema_extra=documented(items=_DEFAULTS.max_tags)
    )
    source_repo: str | None = Field(default=None, json_schema_extra=documented(chars="source_repo"))
    task_id: str | None = Field(default=None, json_schema_extra=documented(chars="task_id"))
    trust_level: str = Field(default="agent", json_schema_extra=documented(choices=TRUST_ORDER))
    confidence: str = Field(default="medium", json_schema_extra=documented(choices=CONFIDENCES))
    pinned: bool = False
    source: str = Field(default="api", json_schema_extra=documented(chars="source"))
    name: str | None = Field(default=None, json_schema_extra=documented(chars="name"))
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description=f"Any JSON object up to {_DEFAULTS.max_metadata_bytes} bytes,"
        f" {_DEFAULTS.max_metadata_depth} levels deep.",
    )
    context: str | None = Field(
        default=None,
        description="The situation the memory came from (the task, the question it answers,"
        " the turn before it): searched with the memory, at a lower weight than its content,"
        " and returned with it. Not part of its identity: the same content in another context"
        " reinforces the stored memory, whose context stays.",
        json_schema_extra=documented(chars=_DEFAULTS.max_context_chars),
    )

    def draft(self) -> MemoryDraft:
        return MemoryDraft(**self.model_dump())


class BatchIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body(
            {
                "memories": [
                    {"content": "Prefer keyset paging over OFFSET", "memory_type": "code_pattern"},
                    {"content": "pytest-asyncio needs loop scope session for shared pools"},
                ]
            }
        ),
    )

    memories: list[MemoryIn] = Field(json_schema_extra=documented(items=_DEFAULTS.max_batch))


class SearchIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body({"q": "flaky test temp dir", "source_repo": REPO, "limit": 5}),
    )

    q: str = Field(
        description="What to look for. Past its first "
        f"{_DEFAULTS.max_query_terms} distinct words a query is cut (and the answer says so).",
        json_schema_extra=documented(chars=_DEFAULTS.max_query_chars),
    )
    source_repo: str | None = None
    memory_type: list[str] | None = Field(
        default=None, json_schema_extra=documented(items="memory_type")
    )
    tags: list[str] | None = None
    min_trust: str | None = Field(default=None, json_schema_extra=documented(choices=TRUST_ORDER))
    min_relevance: float | None = Field(
        default=None, json_schema_extra={"minimum": 0, "maximum": 100}
    )
    limit: int = Field(default=10, json_schema_extra={"minimum": 1, "maximum": 100})
    alpha: float | None = Field(default=None, json_schema_extra={"minimum": 0, "maximum": 1})
    include_archived: bool = False
    track_access: bool = True
    floor: bool = Field(
        default=True, description="false: every match up to limit, however far below the best"
    )

    def draft(self) -> SearchDraft:
        return SearchDraft(**self.model_dump())


class AttemptIn(Body):
    step_index: int | None = None
    action: str | None = Field(default=None, json_schema_extra=documented(chars="action"))
    result: str = Field(json_schema_extra=documented(choices=ATTEMPT_RESULTS))
    error: str | None = Field(default=None, json_schema_extra=documented(chars="error"))


class StrategyLearnIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body(
            {
                "task_description": "Add a column with a backfill",
                "total_attempts": 1,
                "quality_score": 8.5,
                "plan_steps": [
                    "migration adds nullable column",
                    "backfill in batches",
                    "set NOT NULL",
                ],
                "source_repo": REPO,
            }
        ),
    )

    task_description: str = Field(json_schema_extra=documented(chars="task_description"))
    plan_steps: list[str] | None = Field(
        default=None, json_schema_extra=documented(items="plan_steps")
    )
    plan_summary: str | None = Field(
        default=None, json_schema_extra=documented(chars="plan_summary")
    )
    attempt_history: list[AttemptIn] = Field(
        default_factory=list, json_schema_extra=documented(items="attempt_history")
    )
    total_attempts: int
    quality_score: float
    files_changed: list[str] = Field(
        default_factory=list, json_schema_extra=documented(items="files_changed")
    )
    model: str | None = Field(default=None, json_schema_extra=documented(chars="model"))
    source_repo: str | None = Field(default=None, json_schema_extra=documented(chars="source_repo"))
    task_id: str | None = Field(default=None, json_schema_extra=documented(chars="task_id"))

    def draft(self) -> StrategyAttempt:
        fields = self.model_dump(exclude={"attempt_history"})
        history = [Attempt(**a.model_dump()) for a in self.attempt_history]
        return StrategyAttempt(**fields, attempt_history=history)


class FeedbackIn(Body):
    model_config = ConfigDict(extra="forbid", json_schema_extra=body({"outcome": "helpful"}))

    outcome: str = Field(json_schema_extra=documented(choices=("helpful", "unhelpful")))


class RememberIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body(
            {
                "text": "The flaky upload test shared a temp dir with another test; use tmp_path",
                "source_repo": REPO,
                "context": "CI run 4411 failed twice",
            }
        ),
    )

    text: str = Field(json_schema_extra=documented(chars=_DEFAULTS.max_content_chars))
    source_repo: str | None = Field(default=None, json_schema_extra=documented(chars="source_repo"))
    category: str | None = Field(default=None, json_schema_extra=documented(chars="category"))
    name: str | None = Field(default=None, json_schema_extra=documented(chars="name"))
    reasoning: str | None = Field(default=None, json_schema_extra=documented(chars="reasoning"))
    confidence: str | None = Field(default=None, json_schema_extra=documented(choices=CONFIDENCES))
    references: list[str] = Field(
        default_factory=list, json_schema_extra=documented(items="references")
    )
    context: str | None = Field(
        default=None,
        description="The task or situation the learning came from; searched.",
        json_schema_extra=documented(chars=_DEFAULTS.max_context_chars),
    )

    def draft(self) -> RememberDraft:
        return RememberDraft(**self.model_dump())


class FileIn(Body):
    path: str = Field(json_schema_extra=documented(chars="path"))
    content: str = Field(default="", json_schema_extra=documented(chars="file_content"))


class DiagnosisIn(Body):
    root_cause: str | None = None
    reason: str | None = None
    suggested_action: str | None = None


class RetryContextIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body(
            {
                "task_description": "Fix the failing upload test",
                "attempt_number": 2,
                "current_files": [
                    {"path": "tests/test_upload.py", "content": "def test_upload(tmp_path): ..."}
                ],
                "previous_files": [
                    {"path": "tests/test_upload.py", "content": "def test_upload(): ..."}
                ],
                "validation_output": "FAILED tests/test_upload.py::test_upload - FileExistsError",
            }
        ),
    )

    task_description: str = Field(json_schema_extra=documented(chars="retry_text"))
    plan_summary: str = Field(default="", json_schema_extra=documented(chars="retry_text"))
    current_files: list[FileIn] = Field(
        default_factory=list, json_schema_extra=documented(items="files")
    )
    previous_files: list[FileIn] = Field(
        default_factory=list, json_schema_extra=documented(items="files")
    )
    validation_output: str = Field(
        default="", json_schema_extra=documented(chars="validation_output")
    )
    diagnosis: DiagnosisIn | None = None
    attempt_number: int = 1
    full_context_tokens: int | None = None

    def draft(self) -> RetryDraft:
        return RetryDraft(
            task_description=self.task_description,
            plan_summary=self.plan_summary,
            current_files=[FileState(f.path, f.content) for f in self.current_files],
            previous_files=[FileState(f.path, f.content) for f in self.previous_files],
            validation_output=self.validation_output,
            diagnosis=self.diagnosis.model_dump() if self.diagnosis else None,
            attempt_number=self.attempt_number,
            full_context_tokens=self.full_context_tokens,
        )


class PruneIn(Body):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra=body({"dry_run": True, "source_repo": REPO})
    )

    dry_run: bool = False
    source_repo: str | None = None


class MemoryPatch(Body):
    """Only these fields change in place; new content is a supersede."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra=body({"tags": ["deploy"], "pinned": True})
    )

    tags: list[str] | None = None
    pinned: bool | None = None
    confidence: str | None = Field(default=None, json_schema_extra=documented(choices=CONFIDENCES))
    category: str | None = Field(default=None, json_schema_extra=documented(chars="category"))
    metadata: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _content_is_immutable(cls, data: Any) -> Any:
        forbid_content_change(data)  # before "extra field": the answer says what to do
        return data

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.model_fields_set}


class SessionIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body(
            {"source_repo": REPO, "agent": "claude-code", "task": "Fix the flaky upload test"}
        ),
    )

    source_repo: str | None = Field(default=None, json_schema_extra=documented(chars="source_repo"))
    agent: str | None = Field(default=None, json_schema_extra=documented(chars="agent"))
    task: str | None = Field(default=None, json_schema_extra=documented(chars="task"))

    def draft(self) -> SessionDraft:
        return SessionDraft(**self.model_dump())


class KeyChangeIn(Body):
    file: str = Field(json_schema_extra=documented(chars="file"))
    action: str | None = Field(default=None, json_schema_extra=documented(chars="action"))
    description: str | None = Field(default=None, json_schema_extra=documented(chars="description"))


class SessionEndIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body(
            {
                "status": "completed",
                "summary": "Upload test isolated with tmp_path",
                "key_changes": [
                    {
                        "file": "tests/test_upload.py",
                        "action": "modified",
                        "description": "uses tmp_path",
                    }
                ],
            }
        ),
    )

    status: str = Field(json_schema_extra=documented(choices=SESSION_STATUSES))
    summary: str | None = Field(default=None, json_schema_extra=documented(chars="summary"))
    key_changes: list[KeyChangeIn] = Field(
        default_factory=list, json_schema_extra=documented(items="key_changes")
    )

    def draft(self) -> SessionEnd:
        changes = [KeyChange(**c.model_dump()) for c in self.key_changes]
        return SessionEnd(status=self.status, summary=self.summary, key_changes=changes)


class KeyIn(Body):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra=body({"name": "ci-bot", "role": "agent"})
    )

    name: str = Field(json_schema_extra=documented(chars="key_name"))
    role: str = Field(json_schema_extra=documented(choices=ROLES))
