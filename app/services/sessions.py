"""Sessions: start (with pruning that never blocks), end, and the recency-graded snapshot."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict as vars_of
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from app.config import Settings
from app.db.unit_of_work import UnitOfWork, unit_of_work
from app.domain import snapshot as snapshot_rules
from app.domain.drafts import MAX_DRAFTS, DraftText, QueuedDraft, draft_of
from app.domain.errors import ConflictError, NotFoundError
from app.domain.inputs.budgets import snapshot_budget
from app.domain.inputs.memories import source_repo_filter
from app.domain.principal import Principal, system_principal
from app.domain.provenance import MAX_SOURCES, MAX_SOURCES_A_CALL, clean_sources
from app.domain.secrets.find import find_secrets, redacted
from app.domain.secrets.screen import screen_fields
from app.domain.sessions import (
    Session,
    SessionEnd,
    SessionRequest,
    SessionStartRequest,
    session_draft,
    session_end,
    session_page,
)
from app.repository.drafts import DraftRepository
from app.repository.lifecycle import StalenessRepository
from app.repository.sessions import Held, SessionRepository
from app.services.audit import AuditTrail
from app.services.lifecycle import LifecycleService, PruneReport

if TYPE_CHECKING:
    from app.runtime import Runtime

logger = logging.getLogger("agent_memory.sessions")

CAPTURE_TIP = (
    'Record a learning with POST /remember {"text": "...", "source_repo": "owner/name" or null}'
    " (MCP: remember) when you learn one."
)


@dataclass(frozen=True, slots=True)
class SessionStart:
    session: Session
    pruning: PruneReport | None
    capture: dict[str, Any]
    marked_stale: int = 0  # memories whose files changed since the last session


async def prune_quietly(
    runtime: Runtime,
    tenant_id: str,
    source_repo: str | None,
    on_behalf_of: Principal | None = None,
) -> PruneReport | None:
    """Pruning in its own transaction; a failure is logged, never raised. `on_behalf_of`:
    the caller whose session start prunes, whom the audit trail records."""
    try:
        async with unit_of_work(runtime.database, tenant_id, every_person=True) as uow:
            service = LifecycleService(
                uow,
                runtime.settings,
                runtime.telemetry,
                system_principal(tenant_id, on_behalf_of),
            )
            return await service.prune(source_repo)
    except Exception:
        logger.warning("pruning at session start failed; the session starts anyway", exc_info=True)
        return None


Pruner = Callable[[str | None], Awaitable["PruneReport | None"]]


class SessionService:
    def __init__(
        self, uow: UnitOfWork, settings: Settings, actor: Principal, prune: Pruner
    ) -> None:
        self._repo = SessionRepository(uow)
        self._drafts = DraftRepository(uow)
        self._staleness = StalenessRepository(uow)
        self._audit = AuditTrail(uow, actor)
        self._settings = settings
        self._actor = actor
        self._prune = prune  # in a transaction of its own; never raises
        self.tenant_id = uow.tenant_id

    def capture_settings(self) -> dict[str, Any]:
        return {
            "capture_mode": self._settings.capture_mode,
            "silent_capture_budget": self._settings.silent_capture_budget,
            "tip": CAPTURE_TIP,
        }

    async def start(self, request: SessionRequest) -> SessionStart:
        """Check the start, prune in a transaction of its own (never blocking the start),
        then open the session in the caller's transaction."""
        checked = self._check_start(request)
        report = await self._prune(checked.source_repo)
        abandoned = await self._repo.abandon_older_than(self._settings.session_abandon_after_hours)
        for old, held in abandoned:
            await self._queue_drafts(old, held)
        session = await self._repo.start(checked)
        marked: dict[UUID, int] = {}
        if checked.source_repo and checked.all_changed:
            marked = await self._staleness.mark(
                checked.source_repo,
                checked.all_changed,
                checked.history,
                checked.git_commit,
                self._actor.writable_trust,
            )
        if marked:
            await self._audit.record_states(
                "mark_stale",
                list(marked),
                {str(i): {"stale_since": None, "version": v - 1} for i, v in marked.items()},
                {str(i): {"stale_since": "marked", "version": v} for i, v in marked.items()},
                {"session_id": str(session.id), "git_commit": checked.git_commit},
            )
        return SessionStart(session, report, self.capture_settings(), len(marked))

    def _check_start(self, request: SessionRequest) -> SessionStartRequest:
        """Before pruning runs for it: a refused start changes nothing."""
        self._actor.require("write")
        return screen_fields(session_draft(request), self._settings.secrets_policy)

    async def end(self, session_id: UUID, draft: SessionEnd) -> Session:
        self._actor.require("write")
        ending = screen_fields(session_end(draft), self._settings.secrets_policy)
        changes = [
            {k: v for k, v in vars_of(c).items() if v is not None} for c in ending.key_changes
        ]
        held = await self._repo.drafts(session_id, for_update=True)
        ended = await self._repo.end(session_id, ending.status, ending.summary, changes)
        if ended is not None:
            await self._queue_drafts(ended, held)
            return ended
        if await self._repo.get(session_id) is None:
            raise NotFoundError(f"session {session_id} not found")
        raise ConflictError(f"session {session_id} has already ended")

    async def _queue_drafts(self, ended: Session, held: Held | None) -> None:
        """What the session still held goes to the review queue (app/services/drafts.py),
        for a person: the agent was handed the drafts at its stop, and one it kept as a
        memory is reinforced, not stored twice, if a person keeps it again. A session of no
        repository files none. (An ended session's, or one closed as abandoned.)"""
        if held is None or not held[0] or ended.source_repo is None:
            return
        drafts, sources = held
        queued = [
            QueuedDraft(
                kind="fix", text=d["text"], source_repo=ended.source_repo,
                client=ended.agent or "agent", client_session=str(ended.id), seen_at=None,
                files=tuple(d["files"]), sources=tuple(sources[-MAX_SOURCES_A_CALL:]),
                evidence=d.get("evidence") or {}, key=d.get("key"),
            )
            for d in drafts
        ]  # fmt: skip
        ids = await self._drafts.queue(queued)
        if ids:
            detail = {"drafts": [str(i) for i in ids], "session": str(ended.id)}
            await self._audit.record("draft_import", detail=detail)

    async def add_draft(self, session_id: UUID, draft: DraftText) -> int:
        """A draft for an active session, screened like any write (a credential refused or
        redacted by SECRETS_POLICY); how many the session holds (its newest MAX_DRAFTS)."""
        self._actor.require("write")
        checked = screen_fields(draft_of(draft), self._settings.secrets_policy)
        item = {"text": checked.text, "files": list(checked.files),
                "evidence": dict(checked.evidence), "key": checked.key}  # fmt: skip
        held = await self._repo.add_draft(session_id, item, MAX_DRAFTS)
        if held is not None:
            return held
        if await self._repo.get(session_id) is None:
            raise NotFoundError(f"session {session_id} not found")
        raise ConflictError(f"session {session_id} has ended: its drafts went to the review queue")

    async def drafts(self, session_id: UUID) -> tuple[list[dict[str, Any]], list[str]]:
        """The session's drafts, and the untrusted sources it read (which a memory kept
        from a draft carries)."""
        self._actor.require("read")
        found = await self._repo.drafts(session_id)
        if found is None:
            raise NotFoundError(f"session {session_id} not found")
        return found

    async def add_sources(self, session_id: UUID, sources: Sequence[str]) -> int:
        """The session read untrusted input from `sources` (app/domain/provenance.py):
        each kept with any credential in it redacted, whatever SECRETS_POLICY says (a
        refusal would lose the record of the read); how many the session holds."""
        self._actor.require("write")
        cleaned = [redacted(s, find_secrets(s)) for s in clean_sources(sources)]
        held = await self._repo.add_sources(session_id, cleaned, MAX_SOURCES)
        if held is not None:
            return held
        if await self._repo.get(session_id) is None:
            raise NotFoundError(f"session {session_id} not found")
        raise ConflictError(f"session {session_id} has ended: it reads nothing more")

    async def delete(self, session_id: UUID) -> None:
        self._actor.require("admin")
        session = await self._repo.get(session_id)
        if session is None or not await self._repo.delete(session_id):
            raise NotFoundError(f"session {session_id} not found")
        await self._audit.record(
            "session_delete",
            detail={
                "session_id": str(session_id),
                "source_repo": session.source_repo,
                "status": session.status,
                "started_at": session.started_at.isoformat(),
            },
            memory_ids=[],
        )

    async def recent(self, source_repo: str | None, limit: int = 50) -> list[Session]:
        self._actor.require("read")
        return await self._repo.recent(source_repo_filter(source_repo), session_page(limit))

    async def snapshot(
        self, source_repo: str | None, max_chars: int | None, max_tokens: int | None = None
    ) -> snapshot_rules.Snapshot:
        """`max_chars` and `max_tokens` bound the markdown (the tighter one wins)."""
        self._actor.require("read")
        source_repo = source_repo_filter(source_repo)
        budget = snapshot_budget(max_chars, max_tokens)
        rows = await self._repo.snapshot_rows(
            source_repo, snapshot_rules.RECENT_DAYS, snapshot_rules.PER_KIND
        )
        built = snapshot_rules.build_snapshot(
            source_repo, rows.sessions, rows.guardrails, rows.recent, rows.older
        )
        return snapshot_rules.trim(built, budget)
