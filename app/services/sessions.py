"""Sessions: start (with pruning that never blocks), end, and the recency-graded snapshot."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from app.config import Settings
from app.db.session import UnitOfWork, unit_of_work
from app.domain import snapshot as snapshot_rules
from app.domain.errors import ConflictError, NotFoundError
from app.repository.sessions import Session, SessionRepository
from app.services.lifecycle import LifecycleService, PruneReport

if TYPE_CHECKING:
    from app.runtime import Runtime

logger = logging.getLogger("agent_memory.sessions")

CAPTURE_TIP = (
    'Record a learning with POST /remember {"text": "..."} (MCP: remember) '
    "as soon as you learn something worth keeping."
)


@dataclass(frozen=True, slots=True)
class SessionStart:
    session: Session
    pruning: PruneReport | None
    capture: dict[str, Any]


async def prune_quietly(
    runtime: Runtime, tenant_id: str, source_repo: str | None
) -> PruneReport | None:
    """Pruning in its own transaction; a failure is logged, never raised."""
    try:
        async with unit_of_work(runtime.database, tenant_id) as uow:
            service = LifecycleService(uow, runtime.settings, runtime.telemetry)
            return await service.prune(source_repo)
    except Exception:
        logger.warning("pruning at session start failed; the session starts anyway", exc_info=True)
        return None


class SessionService:
    def __init__(self, uow: UnitOfWork, settings: Settings) -> None:
        self._repo = SessionRepository(uow)
        self._settings = settings

    def capture_settings(self) -> dict[str, Any]:
        return {
            "capture_mode": self._settings.capture_mode,
            "silent_capture_budget": self._settings.silent_capture_budget,
            "tip": CAPTURE_TIP,
        }

    async def start(self, source_repo: str | None, agent: str | None, task: str | None) -> Session:
        return await self._repo.start(source_repo, agent, task)

    async def end(
        self, session_id: UUID, status: str, summary: str | None, key_changes: list[dict[str, Any]]
    ) -> Session:
        ended = await self._repo.end(session_id, status, summary, key_changes)
        if ended is not None:
            return ended
        if await self._repo.get(session_id) is None:
            raise NotFoundError(f"session {session_id} not found")
        raise ConflictError(f"session {session_id} has already ended")

    async def snapshot(
        self, source_repo: str | None, max_chars: int | None
    ) -> snapshot_rules.Snapshot:
        rows = await self._repo.snapshot_rows(
            source_repo, snapshot_rules.RECENT_DAYS, snapshot_rules.PER_KIND
        )
        built = snapshot_rules.build_snapshot(
            source_repo, rows.sessions, rows.guardrails, rows.recent, rows.older
        )
        return snapshot_rules.trim(built, max_chars)
