"""A repository's standing memories (app/domain/standing.py): its live pinned memories,
decisions, conventions and rules, the newest and the most read of them, in one statement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.db.unit_of_work import UnitOfWork
from app.repository.rows import ACCESS_COUNT, INTACT
from app.repository.sql import named

# The repository's own (not the global ones, nor anyone's personal one: a rendered file is
# the team's), live, intact and not held for review; each order's first :limit.
_STANDING = f"""
WITH standing AS (
    SELECT m.id, m.memory_type, m.category, m.content, m.metadata, m.trust_level, m.pinned,
           m.stale_reason, m.created_at, {ACCESS_COUNT} AS access_count
    FROM memories m
    WHERE m.tenant_id = :tenant_id AND m.source_repo = :source_repo AND NOT m.personal
      AND memory_is_live(m) AND m.held_at IS NULL AND {INTACT}
      AND (m.pinned OR m.memory_type = ANY(:types::text[])
           OR m.category = ANY(:categories::text[]))
)
SELECT * FROM (
    SELECT * FROM standing ORDER BY pinned DESC, created_at DESC, id DESC LIMIT :limit
) newest
UNION
SELECT * FROM (
    SELECT * FROM standing ORDER BY access_count DESC, created_at DESC, id DESC LIMIT :limit
) most_read
"""


class StandingRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def candidates(
        self, source_repo: str, types: Sequence[str], categories: Sequence[str], limit: int
    ) -> list[dict[str, Any]]:
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "source_repo": source_repo,
            "types": list(types),
            "categories": list(categories),
            "limit": limit,
        }
        return [dict(row) for row in await conn.fetch(*named(_STANDING, values))]
