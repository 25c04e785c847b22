"""/stats in one round trip: one pass over the scope for every count, one for the top accessed."""

from __future__ import annotations

from typing import Any

from app.db.unit_of_work import UnitOfWork
from app.repository.filters import only_repository_rows
from app.repository.lifecycle import PRUNABLE, PruneRules
from app.repository.rows import QUARANTINED, SERVABLE
from app.repository.sql import named

# The tenant's memories, or one repository's.
_SCOPE = f"m.tenant_id = :tenant_id AND {only_repository_rows()}"

_STATS = f"""
WITH counts AS (
    -- One hash aggregate over one scan; the service rolls the combinations up by type,
    -- trust and confidence (at most a few dozen rows).
    SELECT m.memory_type, m.trust_level, m.confidence,
           count(*) AS total,
           count(*) FILTER (WHERE memory_is_live(m)) AS active,
           count(*) FILTER (WHERE m.archived_at IS NOT NULL) AS archived,
           count(*) FILTER (WHERE m.superseded_by IS NOT NULL) AS superseded,
           count(*) FILTER (WHERE m.pinned) AS pinned
    FROM memories m
    WHERE {_SCOPE}
    GROUP BY m.memory_type, m.trust_level, m.confidence
),
top_accessed AS (
    -- From the access counts (kept beside the memories), not from a pass over the scope.
    SELECT t.memory_type, t.id, t.name, t.content, t.access_count, t.last_accessed_at
    FROM (
        SELECT m.memory_type, m.id, m.name, left(m.content, 120) AS content, a.access_count,
               a.last_accessed_at,
               row_number() OVER (PARTITION BY m.memory_type
                                  ORDER BY a.access_count DESC, a.last_accessed_at DESC) AS nth
        FROM memory_access a
        JOIN memories m ON m.tenant_id = a.tenant_id AND m.id = a.memory_id
        WHERE a.tenant_id = :tenant_id AND {_SCOPE}
          AND a.access_count > 0 AND memory_is_live(m)
          AND {SERVABLE}  -- a quarantined or altered row's text is shown to no one here
    ) t
    WHERE t.nth <= 10
)
SELECT
    (SELECT coalesce(jsonb_agg(to_jsonb(c)), '[]'::jsonb) FROM counts c) AS counts,
    -- Health signals and the next prune read their own partial indexes, not the table.
    (SELECT jsonb_build_object(
        'missing_embedding', count(*) FILTER (WHERE m.embedding IS NULL),
        'missing_search_vector', count(*) FILTER (WHERE m.search_vector IS NULL))
     FROM memories m
     WHERE {_SCOPE}
       AND (m.embedding IS NULL OR m.search_vector IS NULL)) AS incomplete,
    (SELECT count(*) FROM memories m
     WHERE {_SCOPE}
       AND {QUARANTINED}) AS quarantined,
    (SELECT count(*) FROM memories m
     WHERE {_SCOPE} AND {PRUNABLE}) AS prunable,
    (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.memory_type, t.access_count DESC),
                     '[]'::jsonb) FROM top_accessed t) AS top_accessed,
    (SELECT e.name FROM embedding_model e) AS embedding_model,
    (SELECT to_jsonb(r) - 'singleton' FROM reembedding r) AS reembedding
"""

# Only while a re-embed is under way does the second vector column exist.
_REEMBEDDED = f"""
SELECT count(m.embedding_next) AS filled, count(*) AS total FROM memories m
WHERE {_SCOPE}
"""


class StatsRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def collect(self, source_repo: str | None, rules: PruneRules) -> dict[str, Any]:
        conn = await self._uow.connection()
        scope = {"tenant_id": self._uow.tenant_id, "source_repo": source_repo}
        row = await conn.fetchrow(*named(_STATS, scope | rules.values()))
        reembedding = row["reembedding"]
        if reembedding is not None:
            progress = await conn.fetchrow(*named(_REEMBEDDED, scope))
            reembedding |= {"filled": progress["filled"], "total": progress["total"]}
        return {
            "reembedding": reembedding,
            "counts": row["counts"],
            "top_accessed": row["top_accessed"],
            "incomplete": row["incomplete"],
            "quarantined": row["quarantined"],
            "prunable": row["prunable"],
            "embedding_model": row["embedding_model"],
        }
