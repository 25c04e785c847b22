"""Agents' feedback on a memory: its relevance moved, and a reuse counted."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.memory import Memory
from app.repository.memory_writes import MAY_CHANGE
from app.repository.rows import SERVABLE, returning_memories, to_memory
from app.repository.sql import named

# Two assignments by who gives the feedback: one who may write the memory's trust counts a
# reuse and moves its version; anyone else moves only its relevance, never below the
# trusted floor. (Every CASE over columns, parameters and immutable functions only, as
# Citus requires: jsonb_set or now() may not sit in one.)
_FEEDBACK = returning_memories(f"""
UPDATE memories AS m SET
    relevance_score = least(greatest(
        m.relevance_score + :delta,
        CASE WHEN {MAY_CHANGE} THEN :floor
             ELSE least(:trusted_floor, m.relevance_score) END), :ceiling),
    metadata = m.metadata || jsonb_strip_nulls(jsonb_build_object('reuse_count',
        CASE WHEN {MAY_CHANGE}
             THEN coalesce((m.metadata->>'reuse_count')::int, 0) + 1 END)),
    version = m.version + CASE WHEN {MAY_CHANGE} THEN 1 ELSE 0 END,
    updated_at = CASE WHEN {MAY_CHANGE} THEN :now ELSE m.updated_at END
WHERE m.tenant_id = :tenant_id AND m.id = :memory_id AND {SERVABLE}""")


class FeedbackRepository:
    """Relevance moves within [floor, ceiling]. A memory of a trust level the caller may not
    write never sinks below `trusted_floor` (nor below where it already is) by that
    caller's feedback, which leaves its version and metadata alone; a caller who may write
    it counts one reuse. A quarantined or altered row is not touched (None)."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def apply(
        self,
        memory_id: UUID,
        delta: float,
        bounds: tuple[float, float, float],
        writable: Sequence[str],
    ) -> Memory | None:
        floor, trusted_floor, ceiling = bounds
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "memory_id": memory_id,
            "delta": delta,
            "floor": floor,
            "trusted_floor": trusted_floor,
            "ceiling": ceiling,
            "writable": list(writable),
            "now": datetime.now(UTC),
        }
        row = await conn.fetchrow(*named(_FEEDBACK, values))
        return to_memory(row) if row else None
