"""Agents that learn: strategies from first-attempt successes, manual /remember, feedback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.config import Settings
from app.db.unit_of_work import UnitOfWork
from app.domain.diffs import retry_context
from app.domain.errors import NotFoundError
from app.domain.inputs.learning import (
    Learning,
    RememberRequest,
    StrategyAttempt,
    feedback_outcome,
    learning,
    strategy_attempt,
)
from app.domain.inputs.retry import RetryRequest, retry_request
from app.domain.inputs.search import hint_query
from app.domain.learning import learned_memory
from app.domain.memory import Memory, NewMemory, StoreOutcome, outcome_note
from app.domain.principal import Principal
from app.domain.secrets.screen import screen_fields
from app.domain.tasks import (
    detect_task_pattern,
    extract_successful_steps,
    hint_text,
    strategy_content,
)
from app.domain.validation import MEMORY_FILES, clean_content, clean_paths
from app.repository.feedback import FeedbackRepository
from app.repository.memories import MemoryRepository
from app.services.audit import AuditTrail
from app.services.memories import MemoryService
from app.services.search import SearchService

logger = logging.getLogger("agent_memory.learning")


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

    @property
    def message(self) -> str:
        note = outcome_note(self.outcome)
        if self.outcome.status == "stored":
            return f"Stored: {self.name} ({self.category}){note}"
        return f"Reinforced: {self.name} ({self.category}) — observation count incremented{note}"


def strategy_files(changed: Sequence[str] | None) -> tuple[str, ...]:
    """The repository's files a strategy changed, as a memory links them (the first
    MEMORY_FILES; a path outside the repository is left out, not refused)."""
    inside = [path for path in changed or [] if not path.replace("\\", "/").startswith("../")]
    return clean_paths(inside[:MEMORY_FILES], "files_changed")


class LearningService:
    def __init__(self, memories: MemoryService, search: SearchService, settings: Settings) -> None:
        self._memories = memories
        self._search = search
        self._settings = settings
        self._limits = memories.limits

    async def learn_strategy(self, draft: StrategyAttempt) -> LearnResult:
        self._memories.actor.require("write")
        self._memories.actor.require_trust("agent")
        attempt = strategy_attempt(draft)
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
        history = [
            {"result": a.result, "step_index": a.step_index} for a in attempt.attempt_history
        ]
        steps = extract_successful_steps(history, plan)
        if not steps:
            return LearnResult("skipped", "no successful step to learn from")
        pattern = detect_task_pattern(attempt.task_description)
        content = clean_content(
            strategy_content(pattern, steps, self._limits.max_content_chars), self._limits
        )
        outcome = await self._memories.store_new(
            NewMemory(
                content=content,
                memory_type="strategy",
                category="strategy",
                tags=(pattern[:64], "strategy"),
                source_repo=attempt.source_repo,
                task_id=attempt.task_id,
                trust_level="agent",
                source="strategy-learning",
                name=f"strategy: {pattern}",
                metadata={
                    "task_pattern": pattern,
                    "steps": steps,
                    "files_changed": list(attempt.files_changed or []),
                    "model": attempt.model,
                    "quality_score": attempt.quality_score,
                    "reuse_count": 0,
                },
                # The task it was learned in: a hint for a similar task finds it.
                context=attempt.task_description,
                # The files it changed: when one changes later, the strategy is marked
                # possibly stale at the next session start.
                files=strategy_files(attempt.files_changed),
            )
        )
        return LearnResult(outcome.status, None, outcome.memory)

    async def remember(self, request: RememberRequest) -> RememberResult:
        """An agent's learning, or (the draft's trust_level `user`) a person's own note,
        which the caller's key must be allowed to write (an admin's, or open mode): the
        same check at every door, as a stored memory's trust level has."""
        self._memories.actor.require("write")
        learned = learning(request, self._limits)
        self._memories.actor.require_trust(learned.trust_level)
        source = "session-capture" if learned.trust_level == "agent" else "person"
        return await self._stored(learned, source)

    async def learned(self, request: RememberRequest, *, source: str) -> RememberResult:
        """A learning stored as a memory as its request says whose it is, without asking the
        key (a request a person keeps, app/services/drafts.py: the caller has checked who
        may write it)."""
        return await self._stored(learning(request, self._limits), source)

    async def _stored(self, learned: Learning, source: str) -> RememberResult:
        """A learning stored as a memory, its category and title inferred."""
        # Screened here too, so that a refusal names the fields as the caller sent them.
        learned = screen_fields(learned, self._limits.secrets_policy)
        new = learned_memory(learned, source=source)
        outcome = await self._memories.store_new(new)
        return RememberResult(outcome, new.name or "", new.category or "")

    async def hint(self, task: str, source_repo: str) -> Hint:
        """A strategy that worked for a similar task here. Bad input is refused; any other
        failure gives an empty hint: planning must not be blocked by memory."""
        self._memories.actor.require("read")
        query = hint_query(task, source_repo, self._limits)
        empty = Hint("", 0.0, None)
        try:
            response = await self._search.run(query)
        except Exception:
            logger.warning("strategy hint failed; planning continues without one", exc_info=True)
            return empty
        # Feedback moves relevance_score: a strategy agents found unhelpful sinks below the bar.
        ranked = sorted(
            ((hit.similarity * hit.memory.relevance_score, hit) for hit in response.hits),
            key=lambda pair: -pair[0],
        )
        if not ranked or ranked[0][0] <= self._settings.strategy_hint_threshold:
            return empty
        similarity, best = ranked[0]
        return Hint(hint_text(best.memory.content), similarity, best.memory)

    async def retry_context(self, request: RetryRequest) -> dict[str, Any]:
        """The diff is CPU work bounded in time (see domain.retry), done in a worker thread
        so the event loop keeps serving."""
        self._memories.actor.require("write")
        cleaned = retry_request(request)
        return await asyncio.to_thread(retry_context, cleaned)


class FeedbackService:
    def __init__(self, uow: UnitOfWork, settings: Settings, actor: Principal) -> None:
        self._repository = FeedbackRepository(uow)
        self._memories = MemoryRepository(uow)
        self._audit = AuditTrail(uow, actor)
        self._settings = settings
        self._actor = actor

    async def record(self, memory_id: UUID, outcome: str) -> Memory:
        self._actor.require("write")
        outcome = feedback_outcome(outcome)
        s = self._settings
        delta = s.feedback_helpful_step if outcome == "helpful" else -s.feedback_unhelpful_step
        bounds = (0.0, s.feedback_trusted_floor, s.relevance_ceiling)
        before = await self._memories.get(memory_id)
        if before is None:
            raise NotFoundError(f"memory {memory_id} not found")
        before.require_changeable()
        memory = await self._repository.apply(memory_id, delta, bounds, self._actor.writable_trust)
        if memory is None:
            raise NotFoundError(f"memory {memory_id} not found")
        await self._audit.record("feedback", [before], [memory], {"outcome": outcome})
        return memory
