"""The bodies of /remember, /strategies, /feedback and /retry-context."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from app.api.examples import REPO, body
from app.api.rules import documented, line_rules, text_rules
from app.api.schemas.body import Body, JsonInt
from app.api.schemas.memory_fields import FILED_UNDER, Repository, WrittenIn, with_memory_rules
from app.domain.inputs.learning import (
    ATTEMPT_RESULTS,
    FEEDBACK_OUTCOMES,
    QUALITY_SCORE,
    TOTAL_ATTEMPTS,
    Attempt,
    RememberRequest,
    StrategyAttempt,
)
from app.domain.inputs.retry import ATTEMPT_NUMBER, FULL_CONTEXT_TOKENS, FileState, RetryRequest
from app.domain.learning import LEARNING_WORDS, MIN_LEARNING_WORDS, REMEMBERED_TRUST
from app.domain.memory import DEFAULT_TRUST


class AttemptIn(Body):
    step_index: JsonInt | None = None
    action: str | None = Field(default=None, json_schema_extra=text_rules("action"))
    result: str = Field(json_schema_extra=documented(choices=ATTEMPT_RESULTS))
    error: str | None = Field(default=None, json_schema_extra=text_rules("error"))


class StrategyLearnIn(Body):
    model_config = ConfigDict(
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

    task_description: str = Field(json_schema_extra=text_rules("task_description", required=True))
    plan_steps: list[str] | None = Field(
        default=None, json_schema_extra=text_rules("plan_steps", items="plan_steps")
    )
    plan_summary: str | None = Field(default=None, json_schema_extra=text_rules("plan_summary"))
    attempt_history: list[AttemptIn] = Field(
        default_factory=list, json_schema_extra=documented(items="attempt_history")
    )
    total_attempts: JsonInt = Field(json_schema_extra=documented(between=TOTAL_ATTEMPTS))
    quality_score: float = Field(json_schema_extra=documented(between=QUALITY_SCORE))
    files_changed: list[str] = Field(
        default_factory=list, json_schema_extra=line_rules("files_changed", items="files_changed")
    )
    model: str | None = Field(default=None, json_schema_extra=line_rules("model"))
    source_repo: Repository = FILED_UNDER
    task_id: str | None = Field(default=None, json_schema_extra=line_rules("task_id"))

    def request(self) -> StrategyAttempt:
        fields = self.model_dump(exclude={"attempt_history"})
        history = [Attempt(**a.model_dump()) for a in self.attempt_history]
        return StrategyAttempt(**fields, attempt_history=history)


class FeedbackIn(Body):
    model_config = ConfigDict(json_schema_extra=body({"outcome": "helpful"}))

    outcome: str = Field(json_schema_extra=documented(choices=FEEDBACK_OUTCOMES))


class RememberIn(WrittenIn):
    model_config = ConfigDict(
        json_schema_extra=with_memory_rules(
            {
                "text": "The flaky upload test shared a temp dir with another test; use tmp_path",
                "source_repo": REPO,
                "context": "CI run 4411 failed twice",
            }
        ),
    )

    text: str = Field(
        description=f"A rule someone can follow, in {MIN_LEARNING_WORDS} words or more.",
        json_schema_extra=text_rules("max_content_chars", required=True, lookahead=LEARNING_WORDS),
    )
    category: str | None = None
    name: str | None = None
    reasoning: str | None = Field(default=None, json_schema_extra=text_rules("reasoning"))
    confidence: str | None = None
    references: list[str] = Field(
        default_factory=list, json_schema_extra=line_rules("references", items="references")
    )
    context: str | None = Field(
        default=None,
        description="The task or situation the learning came from; searched.",
    )

    personal: bool = Field(
        default=False,
        description="Its person's alone (a preference of theirs): never handed to another"
        " person's keys. Needs a key that acts for a person.",
    )
    trust_level: str = Field(
        default=DEFAULT_TRUST,
        description="Whose learning it is: `agent` (an agent's, the default) or, for an admin"
        " key or open mode, `user`: a person's own note, never held for review.",
        json_schema_extra=documented(choices=REMEMBERED_TRUST),
    )

    def request(self) -> RememberRequest:
        return RememberRequest(**self.model_dump())


class FileIn(Body):
    path: str = Field(json_schema_extra=line_rules("path"))
    content: str = Field(default="", json_schema_extra=text_rules("file_content"))


class DiagnosisIn(Body):
    root_cause: str | None = Field(default=None, json_schema_extra=text_rules("description"))
    reason: str | None = Field(default=None, json_schema_extra=text_rules("description"))
    suggested_action: str | None = Field(default=None, json_schema_extra=text_rules("description"))


class RetryContextIn(Body):
    model_config = ConfigDict(
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

    task_description: str = Field(json_schema_extra=text_rules("retry_text"))
    plan_summary: str = Field(default="", json_schema_extra=text_rules("retry_text"))
    current_files: list[FileIn] = Field(
        default_factory=list, json_schema_extra=documented(items="files")
    )
    previous_files: list[FileIn] = Field(
        default_factory=list, json_schema_extra=documented(items="files")
    )
    validation_output: str = Field(default="", json_schema_extra=text_rules("validation_output"))
    diagnosis: DiagnosisIn | None = None
    attempt_number: JsonInt = Field(default=1, json_schema_extra=documented(between=ATTEMPT_NUMBER))
    full_context_tokens: JsonInt | None = Field(
        default=None, json_schema_extra=documented(between=FULL_CONTEXT_TOKENS)
    )

    def request(self) -> RetryRequest:
        return RetryRequest(
            task_description=self.task_description,
            plan_summary=self.plan_summary,
            current_files=[FileState(f.path, f.content) for f in self.current_files],
            previous_files=[FileState(f.path, f.content) for f in self.previous_files],
            validation_output=self.validation_output,
            diagnosis=self.diagnosis.model_dump() if self.diagnosis else None,
            attempt_number=self.attempt_number,
            full_context_tokens=self.full_context_tokens,
        )
