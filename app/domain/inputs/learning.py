"""What an agent learned, as it sends it: a learning (`remember`), a strategy with its
attempts, feedback on a memory; and the rules that make them values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.errors import InvalidInputError
from app.domain.inputs.memories import CONFIDENCES
from app.domain.learning import TOO_SHORT, remembered_trust, too_short
from app.domain.memory import DEFAULT_TRUST, TrustLevel
from app.domain.validation import (
    Limits,
    bounded_list,
    clean_commit,
    clean_context,
    clean_line,
    clean_lines,
    clean_optional_text,
    clean_paths,
    clean_text,
    number_in,
    one_of,
)

ATTEMPT_RESULTS = ("success", "failure")
# Inclusive ranges of the numbers a strategy carries.
TOTAL_ATTEMPTS = (0, 1_000_000)
QUALITY_SCORE = (-1_000_000, 1_000_000)
FEEDBACK_OUTCOMES = ("helpful", "unhelpful")


def feedback_outcome(outcome: str) -> str:
    return one_of(outcome, "outcome", FEEDBACK_OUTCOMES, "")


@dataclass(frozen=True, slots=True)
class RememberRequest:
    text: str
    source_repo: str | None = None
    category: str | None = None
    name: str | None = None
    reasoning: str | None = None
    confidence: str | None = None
    references: Sequence[str] | None = None
    context: str | None = None
    git_branch: str | None = None  # where it was learned: staleness counts from this commit
    git_commit: str | None = None
    files: Sequence[str] | None = None  # the repository's files it is about
    # Whose it is (remembered_trust): an agent's, or a person's own note. A door offers it
    # only where a person may be the one writing (REST, the CLI); MCP's `remember` does not.
    trust_level: str = DEFAULT_TRUST
    personal: bool = False  # its person's alone (docs/team.md)


@dataclass(frozen=True, slots=True)
class Learning:
    text: str
    source_repo: str | None
    category: str | None
    name: str | None
    reasoning: str | None
    confidence: str
    references: list[str]
    context: str | None
    git_branch: str | None = None
    git_commit: str | None = None
    files: tuple[str, ...] = ()
    trust_level: TrustLevel = DEFAULT_TRUST
    personal: bool = False


def learning(request: RememberRequest, limits: Limits) -> Learning:
    text = clean_text(request.text, "text", max_chars=limits.max_content_chars)
    if too_short(text):
        raise InvalidInputError(TOO_SHORT, field="text")
    confidence = request.confidence or "low"
    if confidence not in CONFIDENCES:
        raise InvalidInputError(
            f"invalid confidence '{str(confidence)[:20]}'. Must be one of: high, medium, low",
            field="confidence",
        )
    return Learning(
        text=text,
        source_repo=clean_line(request.source_repo, "source_repo"),
        category=clean_line(request.category, "category"),
        name=clean_line(request.name, "name"),
        reasoning=clean_optional_text(request.reasoning, "reasoning"),
        confidence=confidence,
        references=[r for r in clean_lines(request.references, "references") if r],
        context=clean_context(request.context, limits),
        git_branch=clean_line(request.git_branch, "git_branch"),
        git_commit=clean_commit(request.git_commit),
        files=clean_paths(request.files, "files"),
        trust_level=remembered_trust(request.trust_level),
        personal=bool(request.personal),
    )


@dataclass(frozen=True, slots=True)
class Attempt:
    result: str
    step_index: int | None = None
    action: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class StrategyAttempt:
    task_description: str
    total_attempts: int
    quality_score: float
    plan_steps: Sequence[str] | None = None
    plan_summary: str | None = None
    attempt_history: Sequence[Attempt] = ()
    files_changed: Sequence[str] | None = None
    model: str | None = None
    source_repo: str | None = None
    task_id: str | None = None


def strategy_attempt(draft: StrategyAttempt) -> StrategyAttempt:
    task = clean_text(draft.task_description, "task_description")
    if not task:
        raise InvalidInputError("task_description must not be empty", field="task_description")
    if isinstance(draft.total_attempts, bool) or not isinstance(draft.total_attempts, int):
        raise InvalidInputError("total_attempts must be a whole number", field="total_attempts")
    number_in(draft.total_attempts, "total_attempts", *TOTAL_ATTEMPTS)
    number_in(draft.quality_score, "quality_score", *QUALITY_SCORE)
    history = []
    for attempt in bounded_list(draft.attempt_history, "attempt_history"):
        if attempt.step_index is not None and (
            isinstance(attempt.step_index, bool) or not isinstance(attempt.step_index, int)
        ):
            raise InvalidInputError("step_index must be a whole number", field="step_index")
        history.append(
            Attempt(
                result=one_of(attempt.result, "attempt_history.result", ATTEMPT_RESULTS, ""),
                step_index=attempt.step_index,
                action=clean_optional_text(attempt.action, "action"),
                error=clean_optional_text(attempt.error, "error"),
            )
        )
    return StrategyAttempt(
        task_description=task,
        total_attempts=draft.total_attempts,
        quality_score=float(draft.quality_score),
        plan_steps=[
            clean_text(s, "plan_steps") for s in bounded_list(draft.plan_steps, "plan_steps")
        ]
        if draft.plan_steps is not None
        else None,
        plan_summary=clean_optional_text(draft.plan_summary, "plan_summary"),
        attempt_history=history,
        files_changed=clean_lines(draft.files_changed, "files_changed"),
        model=clean_line(draft.model, "model"),
        source_repo=clean_line(draft.source_repo, "source_repo"),
        task_id=clean_line(draft.task_id, "task_id"),
    )
