"""Pruning, restore, supersede and edits: the statements that move a memory through its life."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.db.session import UnitOfWork
from app.domain.memory import Memory
from app.repository.rows import MEMORY_COLUMNS, to_memory


@dataclass(frozen=True, slots=True)
class PruneRules:
    unused_days: int  # archive after this many days with no access at all
    stale_days: int  # ... or after this many with fewer than `stale_min_accesses`
    stale_min_accesses: int


@dataclass(frozen=True, slots=True)
class PruneCandidate:
    id: UUID
    memory_type: str


# Not archived, not superseded, not pinned, and old without being used (the forgetting
# curve's two thresholds). Age is time since the memory was stored.
_PRUNE = """
WITH candidates AS (
    SELECT m.id, m.memory_type
    FROM memories m
    WHERE m.tenant_id = $1
      AND m.archived_at IS NULL AND m.superseded_by IS NULL AND NOT m.pinned
      AND ($2::text IS NULL OR m.source_repo = $2)
      AND (   (m.created_at < now() - make_interval(days => $3) AND m.access_count = 0)
           OR (m.created_at < now() - make_interval(days => $4) AND m.access_count < $5))
),
archived AS (
    UPDATE memories m SET archived_at = now(), updated_at = now()
    FROM candidates c
    WHERE NOT $6 AND m.tenant_id = $1 AND m.id = c.id
    RETURNING m.id
)
SELECT c.id, c.memory_type FROM candidates c ORDER BY c.memory_type, c.id
"""


class LifecycleRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    @property
    def tenant_id(self) -> str:
        return self._uow.tenant_id

    async def try_prune_lock(self) -> bool:
        """Held until the transaction ends: two processes never prune one tenant at once."""
        conn = await self._uow.connection()
        got: bool = await conn.fetchval(
            "SELECT pg_try_advisory_xact_lock(hashtextextended('agent-memory:prune:' || $1, 0))",
            self.tenant_id,
        )
        return got

    async def prune(
        self, rules: PruneRules, source_repo: str | None, dry_run: bool
    ) -> list[PruneCandidate]:
        conn = await self._uow.connection()
        rows = await conn.fetch(
            _PRUNE,
            self.tenant_id,
            source_repo,
            rules.unused_days,
            rules.stale_days,
            rules.stale_min_accesses,
            dry_run,
        )
        return [PruneCandidate(r["id"], r["memory_type"]) for r in rows]

    async def restore(self, memory_id: UUID) -> Memory | None:
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            f"""
            UPDATE memories AS m
            SET archived_at = NULL,
                updated_at = CASE WHEN m.archived_at IS NULL THEN m.updated_at ELSE now() END
            WHERE m.tenant_id = $1 AND m.id = $2
            RETURNING {MEMORY_COLUMNS}
            """,
            self.tenant_id,
            memory_id,
        )
        return to_memory(row) if row else None

    async def mark_superseded(self, old_id: UUID, new_id: UUID) -> bool:
        """Only a memory not already superseded can be; False when it was."""
        conn = await self._uow.connection()
        done = await conn.fetchval(
            "UPDATE memories SET superseded_by = $3, updated_at = now()"
            " WHERE tenant_id = $1 AND id = $2 AND superseded_by IS NULL RETURNING true",
            self.tenant_id,
            old_id,
            new_id,
        )
        return bool(done)

    async def update_fields(self, memory_id: UUID, fields: dict[str, Any]) -> Memory | None:
        """Set the given editable fields (tags, pinned, confidence, category, metadata)."""
        conn = await self._uow.connection()
        allowed = ("tags", "pinned", "confidence", "category", "metadata")
        names = [name for name in allowed if name in fields]
        assignments = ", ".join(f"{name} = ${i + 3}" for i, name in enumerate(names))
        row = await conn.fetchrow(
            f"UPDATE memories AS m SET {assignments}{', ' if names else ''}updated_at = now()"
            f" WHERE m.tenant_id = $1 AND m.id = $2 RETURNING {MEMORY_COLUMNS}",
            self.tenant_id,
            memory_id,
            *(fields[name] for name in names),
        )
        return to_memory(row) if row else None
