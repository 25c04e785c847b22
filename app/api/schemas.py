"""REST request bodies: the shapes a client may send. Types only: every rule on the values
lives in app/domain and is applied by the services, the same for every door. The limits
shown in OpenAPI are read from the domain's table, so the docs cannot drift from the rule."""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.api.examples import REPO, body
from app.domain.filters import SCOPES
from app.domain.inputs import (
    ATTEMPT_RESULTS,
    CONFIDENCES,
    Attempt,
    FileState,
    MemoryDraft,
    RememberDraft,
    RetryDraft,
    SearchDraft,
    StrategyAttempt,
    forbid_content_change,
)
from app.domain.keys import ROLES
from app.domain.memory import KNOWN_MEMORY_TYPES, MEMORY_TYPE_PATTERN, TRUST_ORDER
from app.domain.sessions import SESSION_STATUSES, KeyChange, SessionDraft, SessionEnd
from app.domain.validation import FIELD_CHARS, LIST_ITEMS, MEMORY_FILES, Limits

_DEFAULTS = Limits()
# The limits Settings may change (LIMIT_* in docs/configuration.md).
CONFIGURED = frozenset(f.name for f in dataclasses.fields(Limits))


def with_configured_limits(schema: Any, limits: Limits) -> Any:
    """The OpenAPI document with each configured limit as this server enforces it."""
    if isinstance(schema, dict):
        name = schema.pop("x-limit", None)
        if name is not None:
            keyword = "maxItems" if "maxItems" in schema else "maxLength"
            schema[keyword] = getattr(limits, name)
        for value in schema.values():
            with_configured_limits(value, limits)
    elif isinstance(schema, list):
        for value in schema:
            with_configured_limits(value, limits)
    return schema


def documented(
    *,
    chars: str | int | None = None,
    items: str | int | None = None,
    choices: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """OpenAPI keywords for a rule the domain enforces (for clients and docs only). A name
    is a field of FIELD_CHARS / LIST_ITEMS, or of Limits: a configured limit, which the
    served document shows as configured (`x-limit`, filled by `with_configured_limits`)."""
    extra: dict[str, Any] = {}
    for keyword, value, table in (
        ("maxLength", chars, FIELD_CHARS),
        ("maxItems", items, LIST_ITEMS),
    ):
        if isinstance(value, int):
            extra[keyword] = value
        elif value in CONFIGURED:
            extra[keyword] = getattr(_DEFAULTS, value)
            extra["x-limit"] = value
        elif value is not None:
            extra[keyword] = table[value]
    if choices is not None:
        extra["enum"] = list(choices)
    return extra


class Body(BaseModel):
    # Strict: a boolean is a JSON boolean and a number a JSON number; "1" or 0 for true is
    # refused, not guessed (`{"dry_run": 0}` must not run a real prune).
    model_config = ConfigDict(extra="forbid", strict=True)


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
        json_schema_extra=documented(chars="max_content_chars"),
    )
    memory_type: str = Field(
        default="general",
        description=f"One of {', '.join(KNOWN_MEMORY_TYPES)}, or any other lower_snake_case name.",
        json_schema_extra={"pattern": MEMORY_TYPE_PATTERN},
    )
    category: str | None = Field(default=None, json_schema_extra=documented(chars="category"))
    tags: list[str] = Field(default_factory=list, json_schema_extra=documented(items="max_tags"))
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
        json_schema_extra=documented(chars="max_context_chars"),
    )
    git_branch: str | None = Field(
        default=None,
        description="The branch it was written on (a search may prefer the current one).",
        json_schema_extra=documented(chars="git_branch"),
    )
    git_commit: str | None = Field(
        default=None, description="The commit it was written at (7 to 64 hex digits)."
    )
    files: list[str] = Field(
        default_factory=list,
        description="Repository-relative paths of the files it is about: when one changes,"
        " the memory is marked possibly stale until reinforced, edited or confirmed.",
        json_schema_extra=documented(items=MEMORY_FILES),
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

    memories: list[MemoryIn] = Field(json_schema_extra=documented(items="max_batch"))


class SearchIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=body({"q": "flaky test temp dir", "source_repo": REPO, "limit": 5}),
    )

    q: str = Field(
        description="What to look for. Past its first "
        f"{_DEFAULTS.max_query_terms} distinct words a query is cut (and the answer says so).",
        json_schema_extra=documented(chars="max_query_chars"),
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
    scope: str | None = Field(
        default=None,
        description='With source_repo: "all" (default) also finds the global memories (filed'
        ' under no repository), "repo" only the repository\'s.',
        json_schema_extra=documented(choices=SCOPES),
    )
    git_branch: str | None = Field(
        default=None,
        description="The branch you work on: its memories rank a little higher (BRANCH_BOOST);"
        " none is left out.",
        json_schema_extra=documented(chars="git_branch"),
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

    text: str = Field(json_schema_extra=documented(chars="max_content_chars"))
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
        json_schema_extra=documented(chars="max_context_chars"),
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


class ConfirmIn(Body):
    git_commit: str | None = Field(
        default=None, description="The commit it was checked against (7 to 64 hex digits)."
    )


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
    git_branch: str | None = Field(default=None, json_schema_extra=documented(chars="git_branch"))
    git_commit: str | None = Field(default=None, description="HEAD (7 to 64 hex digits).")
    changed_files: list[str] = Field(
        default_factory=list,
        description="Files changed since the repository's last session: memories about them"
        " are marked possibly stale.",
        json_schema_extra=documented(items="changed_files"),
    )

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
