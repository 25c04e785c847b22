"""The life of a memory: forgetting (prune), restore, supersede, edit."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from app.config import Settings
from app.db.unit_of_work import UnitOfWork
from app.domain.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
)
from app.domain.inputs.memories import MemoryRequest, memory_edit, source_repo_filter
from app.domain.keys import TRUST_ALLOWED
from app.domain.memory import Memory, StoreOutcome, carried_over
from app.domain.principal import Principal
from app.domain.secrets.screen import SecretsPolicy, screen_json
from app.domain.validation import clean_commit
from app.repository.lifecycle import (
    LifecycleRepository,
    PruneCandidate,
    PruneRules,
    StalenessRepository,
)
from app.repository.memories import MemoryRepository
from app.services.audit import AuditService, AuditTrail
from app.services.memories import MemoryService
from app.telemetry import Telemetry

MAX_HELD_LISTED = 200  # a review list's length: the oldest first

logger = logging.getLogger("agent_memory.prune")


def screen_fields(fields: dict[str, Any], policy: SecretsPolicy) -> dict[str, Any]:
    """An edit's texts (category, tags, metadata) through the same secret screen as a store."""
    screened = {k: screen_json(v, k, policy) for k, v in fields.items()}
    if "tags" in screened:
        screened["tags"] = list(screened["tags"])
    return screened


def prune_rules(settings: Settings) -> PruneRules:
    return PruneRules(
        settings.prune_unused_days, settings.prune_stale_days, settings.prune_stale_min_accesses
    )


@dataclass(frozen=True, slots=True)
class PruneReport:
    archived: dict[str, int]
    total_archived: int
    message: str
    dry_run: bool = False
    ids: list[UUID] = field(default_factory=list)
    skipped: bool = False


class LifecycleService:
    def __init__(
        self,
        uow: UnitOfWork,
        settings: Settings,
        telemetry: Telemetry,
        actor: Principal,
        store: MemoryService | None = None,
    ) -> None:
        """`store`: the caller's memory service, for what writes memories (supersede,
        edit); pruning alone needs none."""
        self._store = store
        self._repo = LifecycleRepository(uow)
        self._memories = MemoryRepository(uow)
        self._audit = AuditTrail(uow, actor)
        self._uow = uow
        self._settings = settings
        self._telemetry = telemetry
        self._actor = actor

    def _writer(self) -> MemoryService:
        if self._store is None:
            raise RuntimeError("this LifecycleService was built without a memory service")
        return self._store

    def _require_trust_of(self, memory: Memory) -> None:
        """A key may change only what it could have written: an agent key cannot unpin,
        edit or supersede what a person or the operator set."""
        if memory.trust_level not in TRUST_ALLOWED[self._actor.role]:
            self._actor.require_trust(memory.trust_level)

    async def prune(self, source_repo: str | None = None, dry_run: bool = False) -> PruneReport:
        self._actor.require("admin")
        source_repo = source_repo_filter(source_repo)
        if not await self._repo.try_prune_lock():
            return PruneReport(
                {}, 0, "Pruning is already running elsewhere; skipped.", dry_run, skipped=True
            )
        candidates = await self._repo.prune(prune_rules(self._settings), source_repo, dry_run)
        by_type = dict(Counter(c.memory_type for c in candidates))
        total = len(candidates)
        if total:
            verb = "would be archived" if dry_run else "archived"
            message = f"{total} item(s) {verb} based on Ebbinghaus forgetting curve."
        else:
            message = "Nothing to archive -- all items are fresh or recently accessed."
        if not dry_run:
            self._telemetry.pruned(total)
            # One entry for the team's memories and one for each person's personal ones:
            # each reaches whom its memories reach (migration 0045).
            for personal_to, group in _by_reader(candidates).items():
                await self._audit.record_states(
                    "prune",
                    [c.id for c in group],
                    {str(c.id): {"archived_at": None, "version": c.version - 1} for c in group},
                    {str(c.id): {"archived_at": "pruned", "version": c.version} for c in group},
                    {
                        "source_repo": source_repo,
                        "archived": dict(Counter(c.memory_type for c in group)),
                    },
                    personal_to,
                )
            await AuditService(self._uow, self._audit, self._actor).forget_old(
                self._settings.audit_retention_days
            )
        logger.info(
            "prune",
            extra={
                "source_repo": source_repo,
                "dry_run": dry_run,
                "archived": by_type,
                "total": total,
            },
        )
        ids = [c.id for c in candidates] if dry_run else []
        return PruneReport(by_type, total, message, dry_run, ids)

    async def archive(self, memory_id: UUID) -> Memory:
        """By hand, what pruning does by the forgetting curve: out of search, kept."""
        self._actor.require("admin")
        return await self._change("archive", memory_id, self._repo.archive)

    async def restore(self, memory_id: UUID) -> Memory:
        self._actor.require("admin")
        return await self._change("restore", memory_id, self._repo.restore)

    async def approve(self, memory_id: UUID) -> Memory:
        """A person's approval of a held memory (app/domain/provenance.py): handed over
        unasked from now on. An admin's act, never an agent's."""
        self._actor.require("admin")
        before = await self._memories.get(memory_id)
        if before is not None:
            before.require_changeable()
        return await self._change("approve", memory_id, self._repo.approve)

    async def held(self, limit: int = MAX_HELD_LISTED) -> list[Memory]:
        """What waits for a person's review, oldest first."""
        self._actor.require("admin")
        return await self._repo.held(limit)

    async def _change(
        self,
        action: str,
        memory_id: UUID,
        change: Callable[[UUID], Awaitable[Memory | None]],
    ) -> Memory:
        before = await self._memories.get(memory_id)
        memory = await change(memory_id)
        if before is None or memory is None:
            raise NotFoundError(f"memory {memory_id} not found")
        if memory.version != before.version:  # recorded only when it changed something
            await self._audit.record(action, [before], [memory])
        return memory

    async def supersede(
        self,
        memory_id: UUID,
        request: MemoryRequest,
        expected_version: int | None = None,
    ) -> tuple[Memory, StoreOutcome]:
        """Store the replacement and point the old memory at it, in the caller's transaction:
        either both happen or neither does."""
        store = self._writer()
        replacement = store.validate(request)
        old = await self._memories.get(memory_id)
        if old is None:
            raise NotFoundError(f"memory {memory_id} not found")
        old.require_changeable()
        self._require_trust_of(old)
        if old.superseded_by is not None:
            raise ConflictError(f"memory {memory_id} is already superseded by {old.superseded_by}")
        if expected_version is not None and old.version != expected_version:
            raise PreconditionFailedError(
                f"memory {memory_id} is at version {old.version}, not {expected_version}"
            )
        outcome = await store.store_new(carried_over(old, replacement))
        if outcome.memory.id == memory_id:
            raise ConflictError(
                "the replacement has the same content as the memory it supersedes:"
                " nothing to supersede"
            )
        if not await self._repo.mark_superseded(memory_id, outcome.memory.id, expected_version):
            raise ConflictError(f"memory {memory_id} was changed concurrently")
        updated = await self._memories.get(memory_id)
        assert updated is not None
        # A replacement this supersede stored is in `after` (its version), so that an undo
        # can archive it again: undone, the memory stands alone as before.
        stored = outcome.status == "stored"
        await self._audit.record(
            "supersede",
            [old],
            [updated, outcome.memory] if stored else [updated],
            {"replacement": str(outcome.memory.id), "replacement_stored": stored},
            memory_ids=[memory_id, outcome.memory.id],
        )
        return updated, outcome

    async def confirm(self, memory_id: UUID, git_commit: str | None = None) -> Memory:
        """The caller checked the memory against the code as it is: no longer possibly
        stale (and, with `git_commit`, known to hold at that commit)."""
        self._actor.require("write")
        commit = clean_commit(git_commit)
        before = await self._memories.get(memory_id)
        if before is None:
            raise NotFoundError(f"memory {memory_id} not found")
        before.require_changeable()
        self._require_trust_of(before)
        memory = await StalenessRepository(self._uow).confirm(
            memory_id, commit, self._actor.writable_trust
        )
        if memory is None:
            raise NotFoundError(f"memory {memory_id} not found")
        await self._audit.record("confirm", [before], [memory], {"git_commit": commit})
        return memory

    async def edit(
        self,
        memory_id: UUID,
        changes: Mapping[str, Any],
        expected_version: int | None = None,
    ) -> Memory:
        self._actor.require("write")
        store = self._writer()
        fields = screen_fields(memory_edit(changes, store.limits), store.limits.secrets_policy)
        writable = sorted(TRUST_ALLOWED[self._actor.role])
        before = await self._memories.get(memory_id)
        if before is not None:
            before.require_changeable()
        memory = await self._repo.update_fields(memory_id, fields, expected_version, writable)
        if memory is not None and before is not None:
            # The embedding reads the category: a stale vector would rank by the old one.
            if "category" in fields:
                memory = await store.reembed(memory)
            action = "edit"
            if set(fields) == {"pinned"}:
                action = "pin" if fields["pinned"] else "unpin"
            await self._audit.record(action, [before], [memory])
            return memory
        current = await self._memories.get(memory_id)
        if current is None:
            raise NotFoundError(f"memory {memory_id} not found")
        self._require_trust_of(current)
        raise PreconditionFailedError(
            f"memory {memory_id} is at version {current.version}, not {expected_version}"
        )


def _by_reader(candidates: list[PruneCandidate]) -> dict[UUID | None, list[PruneCandidate]]:
    """The candidates by whom they reach: the team (None), or a person."""
    groups: dict[UUID | None, list[PruneCandidate]] = {}
    for candidate in candidates:
        groups.setdefault(candidate.personal_to, []).append(candidate)
    return groups
