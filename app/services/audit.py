"""The audit trail: every state-changing operation but a plain store or reinforcement is
recorded with its actor and the values before and after; admins read it and undo from it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.audit import (
    ACTIONS,
    MAX_AUDIT_PAGE,
    UNDOABLE,
    Actor,
    AuditEntry,
    AuditQuery,
    state_of,
)
from app.domain.errors import ConflictError, InvalidInputError, NotFoundError
from app.domain.memory import Memory
from app.domain.principal import Principal
from app.domain.validation import one_of
from app.repository.audit import AuditRepository


class AuditTrail:
    """What a service records; one per unit of work, for its caller."""

    def __init__(self, uow: UnitOfWork, actor: Principal) -> None:
        self._repo = AuditRepository(uow)
        self._actor = actor

    async def record(
        self,
        action: str,
        before: Sequence[Memory] = (),
        after: Sequence[Memory] = (),
        detail: dict[str, Any] | None = None,
        memory_ids: Sequence[UUID] | None = None,
    ) -> AuditEntry:
        ids = list(memory_ids) if memory_ids is not None else [m.id for m in after or before]
        # A personal memory's entry reaches its person alone, as the memory does.
        personal = {m.person_id for m in (*before, *after) if m.personal}
        if len(personal) > 1:  # one entry reaches one person: record each's apart
            raise ValueError(f"an audit entry of {action} about several people's memories")
        return await self._repo.record(
            self._recorded_actor,
            action,
            ids,
            {str(m.id): state_of(m) for m in before},
            {str(m.id): state_of(m) for m in after},
            detail or {},
            personal.pop() if personal else None,
        )

    async def record_states(
        self,
        action: str,
        memory_ids: Sequence[UUID],
        before: dict[str, Any],
        after: dict[str, Any],
        detail: dict[str, Any] | None = None,
        personal_to: UUID | None = None,
    ) -> AuditEntry:
        """For changes made in bulk by one statement (prune), whose rows are not read back;
        `personal_to`: the one person whose personal memories these all are."""
        return await self._repo.record(
            self._recorded_actor, action, memory_ids, before, after, detail or {}, personal_to
        )

    @property
    def _recorded_actor(self) -> Actor:
        actor = self._actor.accountable
        return Actor(actor.key_id, actor.role, actor.person_id)


class AuditService:
    def __init__(self, uow: UnitOfWork, trail: AuditTrail, actor: Principal) -> None:
        self._repo = AuditRepository(uow)
        self._trail = trail
        self._actor = actor

    async def entries(self, query: AuditQuery) -> list[AuditEntry]:
        self._actor.require("admin")
        if not 1 <= query.limit <= MAX_AUDIT_PAGE:
            raise InvalidInputError(f"limit must be 1 to {MAX_AUDIT_PAGE}", field="limit")
        if query.action is not None:
            one_of(query.action, "action", ACTIONS, "")
        return await self._repo.list(query)

    async def undo(self, entry_id: UUID) -> tuple[AuditEntry, list[Memory]]:
        """Put back what the entry changed, each memory only if nothing changed it since
        (409 otherwise, and nothing is put back); recorded as an entry of its own."""
        self._actor.require("admin")
        entry = await self._repo.get(entry_id)
        if entry is None:
            raise NotFoundError(f"audit entry {entry_id} not found")
        if entry.action not in UNDOABLE:
            raise ConflictError(
                f"a {entry.action} cannot be undone (undoable: {', '.join(sorted(UNDOABLE))})"
            )
        if entry.undone_by is not None:
            raise ConflictError(f"audit entry {entry_id} was already undone by {entry.undone_by}")
        now = datetime.now(UTC)
        restored: list[Memory] = []
        for memory_id, before in entry.before.items():
            left_at = entry.after.get(memory_id, {}).get("version")
            state = {k: v for k, v in before.items() if k in _PUT_BACK_FIELDS}
            memory = (
                None
                if left_at is None
                else await self._repo.put_back(UUID(memory_id), state, left_at, now)
            )
            if memory is None:
                raise ConflictError(
                    f"memory {memory_id} changed since this entry (or is gone): nothing was"
                    " undone; look at its history and change it by hand"
                )
            restored.append(memory)
        restored += await self._archive_replacement(entry, now)
        # The undo's own entry is the mark: its detail names the entry it undid. Two undos
        # of one entry at once cannot both pass: the first holds the memories' rows, and
        # the second finds their versions moved.
        undo = await self._trail.record(
            "undo", before=(), after=restored, detail={"undid": str(entry_id)}
        )
        return undo, restored

    async def _archive_replacement(self, entry: AuditEntry, now: datetime) -> list[Memory]:
        """Undoing a supersede that stored its replacement archives that replacement too
        (only while nothing changed it since), so the snapshot does not show both."""
        if entry.action != "supersede" or not entry.detail.get("replacement_stored"):
            return []
        replacement = str(entry.detail["replacement"])
        left_at = entry.after.get(replacement, {}).get("version")
        archived = (
            None
            if left_at is None
            else await self._repo.put_back(
                UUID(replacement), {"archived_at": now.isoformat()}, left_at, now
            )
        )
        if archived is None:
            raise ConflictError(
                f"memory {replacement} (the replacement) changed since this entry: nothing"
                " was undone; look at its history and change it by hand"
            )
        return [archived]

    async def forget_old(self, days: int) -> int:
        return await self._repo.forget_older_than(days)


_PUT_BACK_FIELDS = frozenset(
    {"tags", "pinned", "confidence", "category", "metadata", "archived_at", "superseded_by"}
)
