"""The audit log: appended by the services, read by admins, aged out past a floor."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import asyncpg

from app.db.pool import on_citus
from app.db.unit_of_work import UnitOfWork, set_local
from app.domain.audit import Actor, AuditEntry, AuditQuery
from app.domain.memory import Memory
from app.repository.rows import returning_memories, to_memory
from app.repository.sql import named

_STORED = (
    "tenant_id, id, at, actor_key, actor_role, action, memory_ids, before, after, detail,"
    " actor_person, personal_to"
)
# The log is append-only for the app role (migration 0031): an undo is its own entry, whose
# detail names the entry it undid, and that is how an entry knows it was undone (entries
# from before 0031 carry the mark in undone_by).
_UNDONE_BY = """coalesce(a.undone_by, (
    SELECT u.id FROM audit_log u
    WHERE u.tenant_id = :tenant_id AND u.action = 'undo' AND u.detail->>'undid' = a.id::text
    ORDER BY u.at LIMIT 1))"""
_COLUMNS = ", ".join(f"a.{name}" for name in _STORED.split(", ")) + f", {_UNDONE_BY} AS undone_by"
_NAMES = (*_STORED.split(", "), "undone_by")

_RECORD = f"""
INSERT INTO audit_log (tenant_id, actor_key, actor_role, action, memory_ids, before, after,
                       detail, actor_person, personal_to)
VALUES (:tenant_id, :actor_key, :actor_role, :action, :memory_ids, :before, :after, :detail,
        :actor_person, :personal_to)
RETURNING {_STORED}, NULL::uuid AS undone_by
"""

_LIST = f"""
SELECT {_COLUMNS} FROM audit_log a
WHERE a.tenant_id = :tenant_id
  AND (:since::timestamptz IS NULL OR a.at >= :since)
  AND (:until::timestamptz IS NULL OR a.at < :until)
  AND (:actor_key::uuid IS NULL OR a.actor_key = :actor_key)
  AND (:memory_id::uuid IS NULL OR a.memory_ids @> ARRAY[:memory_id::uuid])
  AND (:action::text IS NULL OR a.action = :action)
ORDER BY a.at DESC, a.id DESC
LIMIT :limit
"""

# An undo puts back the fields the entry kept, only while the memory is still at the
# version the entry left it at (else nothing changes and the caller answers 409).
_PUT_BACK = returning_memories(
    """
UPDATE memories AS m SET
    tags = CASE WHEN :state ? 'tags' THEN r.tags ELSE m.tags END,
    pinned = CASE WHEN :state ? 'pinned' THEN r.pinned ELSE m.pinned END,
    confidence = CASE WHEN :state ? 'confidence' THEN r.confidence ELSE m.confidence END,
    category = CASE WHEN :state ? 'category' THEN r.category ELSE m.category END,
    metadata = CASE WHEN :state ? 'metadata' THEN r.metadata ELSE m.metadata END,
    archived_at = CASE WHEN :state ? 'archived_at' THEN r.archived_at ELSE m.archived_at END,
    superseded_by = CASE WHEN :state ? 'superseded_by' THEN r.superseded_by
                         ELSE m.superseded_by END,
    version = m.version + 1,
    updated_at = :now
FROM jsonb_populate_record(NULL::memories, :state) AS r
WHERE m.tenant_id = :tenant_id AND m.id = :memory_id AND m.version = :expected_version"""
)


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(**{name: row[name] for name in _NAMES})


class AuditRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def record(
        self,
        actor: Actor,
        action: str,
        memory_ids: Sequence[UUID],
        before: dict[str, Any],
        after: dict[str, Any],
        detail: dict[str, Any],
        personal_to: UUID | None = None,
    ) -> AuditEntry:
        """`personal_to`: the person whose personal memories the entry is about, whom alone
        it then reaches (migration 0045)."""
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "actor_key": actor.key_id,
            "actor_role": actor.role,
            "actor_person": actor.person_id,
            "personal_to": personal_to,
            "action": action,
            "memory_ids": list(memory_ids),
            "before": before,
            "after": after,
            "detail": detail,
        }
        return _entry(await conn.fetchrow(*named(_RECORD, values)))

    async def list(self, query: AuditQuery) -> list[AuditEntry]:
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "since": query.since,
            "until": query.until,
            "actor_key": query.actor_key,
            "memory_id": query.memory_id,
            "action": query.action,
            "limit": query.limit,
        }
        return [_entry(r) for r in await conn.fetch(*named(_LIST, values))]

    async def get(self, entry_id: UUID) -> AuditEntry | None:
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            *named(
                f"SELECT {_COLUMNS} FROM audit_log a WHERE a.tenant_id = :tenant_id AND a.id = :id",
                {"tenant_id": self._uow.tenant_id, "id": entry_id},
            )
        )
        return _entry(row) if row else None

    async def put_back(
        self, memory_id: UUID, state: dict[str, Any], expected_version: int, now: Any
    ) -> Memory | None:
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "memory_id": memory_id,
            "state": state,
            "expected_version": expected_version,
            "now": now,
        }
        row = await conn.fetchrow(*named(_PUT_BACK, values))
        return to_memory(row) if row else None

    async def forget_older_than(self, days: int) -> int:
        """The one way entries leave; never one younger than the database's 30-day floor
        (migration 0031's row policy), whatever `days` says."""
        conn = await self._uow.connection()
        deleted = await conn.fetchval(
            *named(
                "WITH gone AS (DELETE FROM audit_log WHERE tenant_id = :tenant_id"
                " AND at < now() - make_interval(days => :days) RETURNING 1)"
                " SELECT count(*) FROM gone",
                {"tenant_id": self._uow.tenant_id, "days": days},
            )
        )
        return int(deleted)


# An entry the operator's tools make on the server (`agent-memory keys`), over the
# database owner's connection outside any request: the tenant named, no key behind it.
_RECORD_OPERATOR = """
INSERT INTO audit_log (tenant_id, actor_key, actor_role, action, memory_ids, before, after,
                       detail)
VALUES (:tenant_id, NULL, 'operator', :action, '{}', '{}'::jsonb, '{}'::jsonb,
        :detail::jsonb)
"""


async def record_operator_entry(
    conn: asyncpg.Connection, tenant_id: str, action: str, detail: dict[str, Any]
) -> None:
    """An audit entry in `tenant_id`'s trail for what the operator did on the server. Row
    security is forced on audit_log (migration 0031), for its owner too unless a superuser:
    the entry is written as the tenant's, in a transaction (a savepoint in the caller's)
    that names it, and on Citus reaches the tenant's worker with that name."""
    values = {"tenant_id": tenant_id, "action": action, "detail": json.dumps(detail)}
    async with conn.transaction():
        if await on_citus(conn):
            await conn.execute("SET LOCAL citus.propagate_set_commands = 'local'")
        await set_local(conn, {"app.tenant_id": tenant_id})
        await conn.execute(*named(_RECORD_OPERATOR, values))
