"""The services for one request (or one MCP tool call), built in one place for every door.

A door authenticates, opens a scope for the caller, calls a service and renders what it
returns. Each service checks the caller's role and applies the input rules itself, so a
door holds no rule of its own and a new door gets every rule for free.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cached_property

from app.db.unit_of_work import UnitOfWork, unit_of_work
from app.domain.errors import RateLimitedError
from app.domain.principal import Principal
from app.repository.transfer import SessionTransferRepository, TransferRepository
from app.runtime import Runtime
from app.services.audit import AuditService, AuditTrail
from app.services.backfill import backfill_embeddings
from app.services.drafts import DraftQueue
from app.services.keys import KeyService
from app.services.learning import FeedbackService, LearningService
from app.services.lifecycle import LifecycleService, PruneReport
from app.services.memories import MemoryService
from app.services.oauth import ConnectedClients
from app.services.people import PeopleService
from app.services.recall import RecallService
from app.services.search import SearchService
from app.services.sessions import SessionService, prune_quietly
from app.services.standing import StandingService
from app.services.stats import StatsService
from app.services.tidy import TidyService
from app.services.transfer import TransferService
from app.services.written import WrittenRules


class Services:
    """One caller's services over one unit of work (one transaction)."""

    def __init__(self, runtime: Runtime, uow: UnitOfWork, principal: Principal) -> None:
        self.runtime = runtime
        self.uow = uow
        self.principal = principal

    @cached_property
    def memories(self) -> MemoryService:
        r = self.runtime
        return MemoryService(self.uow, r.embedder, r.telemetry, self.principal, r.limits)

    @cached_property
    def search(self) -> SearchService:
        r = self.runtime
        return SearchService(
            self.uow, r.embedder, r.settings, r.telemetry, self.principal, r.limits
        )

    @cached_property
    def recall(self) -> RecallService:
        return RecallService(self.search, self.runtime.settings)

    @cached_property
    def learning(self) -> LearningService:
        return LearningService(self.memories, self.search, self.runtime.settings)

    @cached_property
    def drafts(self) -> DraftQueue:
        return DraftQueue(self.uow, self.learning, self.runtime.limits, self.principal)

    @cached_property
    def standing(self) -> StandingService:
        return StandingService(self.uow, self.principal)

    @cached_property
    def written(self) -> WrittenRules:
        return WrittenRules(self.uow, self.principal)

    @cached_property
    def tidy(self) -> TidyService:
        return TidyService(self.uow, self.runtime, self.principal)

    @cached_property
    def feedback(self) -> FeedbackService:
        return FeedbackService(self.uow, self.runtime.settings, self.principal)

    @cached_property
    def lifecycle(self) -> LifecycleService:
        r = self.runtime
        return LifecycleService(self.uow, r.settings, r.telemetry, self.principal, self.memories)

    @cached_property
    def sessions(self) -> SessionService:
        runtime, principal = self.runtime, self.principal

        async def prune(source_repo: str | None) -> PruneReport | None:
            return await prune_quietly(runtime, principal.tenant_id, source_repo, principal)

        return SessionService(self.uow, runtime.settings, self.principal, prune)

    @cached_property
    def keys(self) -> KeyService:
        """Key management for an admin of its own tenant, recorded in the audit trail."""
        self.principal.require("admin")
        return KeyService(self.uow.connection, AuditTrail(self.uow, self.principal))

    @cached_property
    def people(self) -> PeopleService:
        """A tenant's people: named to every reader, managed by its admin (recorded in the
        audit trail)."""
        trail = AuditTrail(self.uow, self.principal)
        return PeopleService(self.uow.connection, trail, self.principal)

    @cached_property
    def oauth(self) -> ConnectedClients:
        """A person's consent to a client, and the connected clients they (an admin: the
        tenant's) see and revoke; each change in the audit trail."""
        return ConnectedClients(self.uow, self.principal)

    async def backfill(self) -> int:
        """An admin's request to embed its own tenant's pending memories now."""
        self.principal.require("admin")
        return await backfill_embeddings(self.runtime, self.principal.tenant_id)

    @cached_property
    def transfer(self) -> TransferService:
        return TransferService(
            self.memories,
            TransferRepository(self.uow),
            SessionTransferRepository(self.uow),
            AuditTrail(self.uow, self.principal),
        )

    @cached_property
    def audit(self) -> AuditService:
        return AuditService(self.uow, AuditTrail(self.uow, self.principal), self.principal)

    @cached_property
    def stats(self) -> StatsService:
        return StatsService(self.uow, self.runtime.settings, self.principal)


@asynccontextmanager
async def services_for(runtime: Runtime, principal: Principal) -> AsyncIterator[Services]:
    """The caller's services in one transaction: committed when the block ends normally,
    rolled back on any error. The tenant comes from the key, never from the request.

    Each tenant has a bounded number of requests in flight; the rest wait their turn
    (their own tenant's, no other's), and a tenant with twice the requests of another
    yields to it (app/concurrency.py), so one tenant's burst cannot take the whole service."""
    refusal = RateLimitedError(
        f"this tenant has more requests than the {runtime.admission.per_tenant} it may run at"
        " once (fewer while lighter tenants are being served); retry shortly",
        retry_after_s=1,
    )
    settings = runtime.settings
    async with (
        runtime.admission.slot(principal.tenant_id, settings.tenant_queue_timeout_s, refusal),
        unit_of_work(
            runtime.database,
            principal.tenant_id,
            principal.key_id,
            principal.person_id,
            every_person=principal.every_person,
        ) as uow,
    ):
        yield Services(runtime, uow, principal)
