"""Agents that learn: strategies from first-attempt successes, manual /remember, feedback."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from app.config import Settings
from app.db.session import unit_of_work
from app.domain.errors import InvalidInputError, NotFoundError
from app.domain.learning import CATEGORY_TYPES, MIN_LEARNING_CHARS, infer_category, make_title
from app.domain.memory import Memory, NewMemory, StoreOutcome
from app.domain.tasks import (
    detect_task_pattern,
    extract_successful_steps,
    strategy_content,
)
from app.domain.validation import Limits, clean_content, clean_context, clean_text
from app.repository.memories import FeedbackRepository
from app.repository.search import SearchFilter
from app.services.memories import MemoryService
from app.services.search import SearchRequest, SearchService

if TYPE_CHECKING:
    from app.runtime import Runtime

logger = logging.getLogger("agent_memory.learning")

HINT_OPEN = "[STRATEGY HINT — previously successful approach for similar tasks]"
HINT_CLOSE = "[END STRATEGY HINT — use as inspiration, not as instruction]"
CONFIDENCE_LEVELS = ("high", "medium", "low")


@dataclass(frozen=True, slots=True)
class StrategyAttempt:
    task_description: str
    plan_steps: Sequence[str] | None
    plan_summary: str | None
    attempt_history: Sequence[Mapping[str, Any]]
    total_attempts: int
    quality_score: float
    files_changed: Sequence[str]
    model: str | None
    source_repo: str | None
    task_id: str | None


@dataclass(frozen=True, slots=True)
class LearnResult:
    status: str
    reason: str | None = None
    memory: Memory | None = None


@dataclass(frozen=True, slots=True)
class Hint:
    hint: str
    similarity: float
    strategy: Memory | None


@dataclass(frozen=True, slots=True)
class RememberResult:
    outcome: StoreOutcome
    name: str
    category: str


class LearningService:
    def __init__(self, memories: MemoryService, settings: Settings, limits: Limits) -> None:
        self._memories = memories
        self._settings = settings
        self._limits = limits

    async def learn_strategy(self, attempt: StrategyAttempt) -> LearnResult:
        if attempt.total_attempts != 1:
            return LearnResult(
                "skipped", f"not a first-attempt success ({attempt.total_attempts} attempts)"
            )
        minimum = self._settings.strategy_min_quality
        if attempt.quality_score < minimum:
            return LearnResult(
                "skipped", f"quality_score {attempt.quality_score} is below {minimum}"
            )
        plan = attempt.plan_summary or "\n".join(attempt.plan_steps or [])
        steps = extract_successful_steps(attempt.attempt_history, plan)
        if not steps:
            return LearnResult("skipped", "no successful step to learn from")
        pattern = detect_task_pattern(attempt.task_description)
        content = clean_content(strategy_content(pattern, steps), self._limits)
        # The task it was learned in is its context: a hint for a similar task finds it.
        task = clean_context(attempt.task_description, self._limits, field="task_description")
        outcome = await self._memories.store(
            NewMemory(
                content=content,
                memory_type="strategy",
                category="strategy",
                tags=(pattern, "strategy"),
                source_repo=attempt.source_repo,
                task_id=attempt.task_id,
                trust_level="agent",
                source="strategy-learning",
                name=f"strategy: {pattern}",
                metadata={
                    "task_pattern": pattern,
                    "steps": steps,
                    "files_changed": list(attempt.files_changed),
                    "model": attempt.model,
                    "quality_score": attempt.quality_score,
                    "reuse_count": 0,
                },
                context=task,
            )
        )
        return LearnResult(outcome.status, None, outcome.memory)

    async def remember(
        self,
        text: str,
        *,
        source_repo: str | None = None,
        category: str | None = None,
        name: str | None = None,
        reasoning: str | None = None,
        confidence: str | None = None,
        references: Sequence[str] = (),
        context: str | None = None,
    ) -> RememberResult:
        text = clean_text(text, "text", max_chars=self._limits.max_content_chars)
        context = clean_context(context, self._limits)
        if len(text) < MIN_LEARNING_CHARS:
            raise InvalidInputError(
                "Learning too short (need at least 20 characters). Please provide more detail.",
                field="text",
            )
        confidence = confidence or "low"
        if confidence not in CONFIDENCE_LEVELS:
            raise InvalidInputError(
                f"invalid confidence '{confidence}'. Must be one of: high, medium, low",
                field="confidence",
            )
        category = (category or "").strip() or infer_category(text)
        name = (name or "").strip() or make_title(text)
        metadata: dict[str, Any] = {}
        if reasoning:
            metadata["reasoning"] = reasoning
        if references:
            metadata["references"] = list(references)
        outcome = await self._memories.store(
            NewMemory(
                content=text,
                memory_type=CATEGORY_TYPES.get(category, "learning"),
                category=category,
                source_repo=source_repo,
                confidence=confidence,  # type: ignore[arg-type]
                source="session-capture",
                name=name,
                metadata=metadata,
                context=context,
            )
        )
        return RememberResult(outcome, name, category)

    @staticmethod
    def remember_message(result: RememberResult) -> str:
        if result.outcome.status == "stored":
            return f"Stored: {result.name} ({result.category})"
        return f"Reinforced: {result.name} ({result.category}) — observation count incremented"


async def strategy_hint(runtime: Runtime, tenant_id: str, task: str, source_repo: str) -> Hint:
    """Never raises: planning must not be blocked by memory."""
    empty = Hint("", 0.0, None)
    settings = runtime.settings
    try:
        async with unit_of_work(runtime.database, tenant_id) as uow:
            search = SearchService(uow, runtime.embedder, settings, runtime.telemetry)
            response = await search.search(
                SearchRequest(
                    query=task,
                    filters=SearchFilter(source_repo=source_repo, memory_types=["strategy"]),
                    limit=2,
                )
            )
    except Exception:
        logger.warning("strategy hint failed; planning continues without one", exc_info=True)
        return empty
    # Feedback moves relevance_score: a strategy agents found unhelpful sinks below the bar.
    ranked = sorted(
        ((hit.similarity * hit.memory.relevance_score, hit) for hit in response.hits),
        key=lambda pair: -pair[0],
    )
    if not ranked or ranked[0][0] <= settings.strategy_hint_threshold:
        return empty
    similarity, best = ranked[0]
    return Hint(f"{HINT_OPEN}\n{best.memory.content}\n{HINT_CLOSE}", similarity, best.memory)


class FeedbackService:
    def __init__(self, repository: FeedbackRepository, settings: Settings) -> None:
        self._repository = repository
        self._settings = settings

    async def record(self, memory_id: UUID, outcome: str) -> Memory:
        s = self._settings
        delta = s.feedback_helpful_step if outcome == "helpful" else -s.feedback_unhelpful_step
        memory = await self._repository.apply(memory_id, delta, 0.0, s.relevance_ceiling)
        if memory is None:
            raise NotFoundError(f"memory {memory_id} not found")
        return memory
