"""/stats in one round trip: one pass over the scope for every count, one for the top accessed."""

from __future__ import annotations

from typing import Any

from app.db.unit_of_work import UnitOfWork
from app.repository.lifecycle import PruneRules

_STATS = """
WITH counts AS (
    -- One hash aggregate over one scan; the service rolls the combinations up by type,
    -- trust and confidence (at most a few dozen rows).
    SELECT m.memory_type, m.trust_level, m.confidence,
           count(*) AS total,
           count(*) FILTER (WHERE m.archived_at IS NULL AND m.superseded_by IS NULL) AS active,
           count(*) FILTER (WHERE m.archived_at IS NOT NULL) AS archived,
           count(*) FILTER (WHERE m.superseded_by IS NOT NULL) AS superseded,
           count(*) FILTER (WHERE m.pinned) AS pinned
    FROM memories m
    WHERE m.tenant_id = $1 AND ($2::text IS NULL OR m.source_repo = $2)
    GROUP BY m.memory_type, m.trust_level, m.confidence
),
top_accessed AS (
    SELECT t.memory_type, t.id, t.name, t.content, t.access_count, t.last_accessed_at
    FROM (
        SELECT m.memory_type, m.id, m.name, left(m.content, 120) AS content, m.access_count,
               m.last_accessed_at,
               row_number() OVER (PARTITION BY m.memory_type
                                  ORDER BY m.access_count DESC, m.last_accessed_at DESC) AS nth
        FROM memories m
        WHERE m.tenant_id = $1 AND ($2::text IS NULL OR m.source_repo = $2)
          AND m.access_count > 0 AND m.archived_at IS NULL AND m.superseded_by IS NULL
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
     WHERE m.tenant_id = $1 AND ($2::text IS NULL OR m.source_repo = $2)
       AND (m.embedding IS NULL OR m.search_vector IS NULL)) AS incomplete,
    (SELECT count(*) FROM memories m
     WHERE m.tenant_id = $1 AND ($2::text IS NULL OR m.source_repo = $2)
       AND m.quarantined_at IS NOT NULL) AS quarantined,
    (SELECT count(*) FROM memories m
     WHERE m.tenant_id = $1 AND ($2::text IS NULL OR m.source_repo = $2)
       AND m.archived_at IS NULL AND m.superseded_by IS NULL AND NOT m.pinned
       AND m.created_at < now() - make_interval(days => least($3::int, $4::int))
       AND (   (m.created_at < now() - make_interval(days => $3) AND m.access_count = 0)
            OR (m.created_at < now() - make_interval(days => $4) AND m.access_count < $5)))
        AS prunable,
    (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.memory_type, t.access_count DESC),
                     '[]'::jsonb) FROM top_accessed t) AS top_accessed,
    (SELECT e.name FROM embedding_model e) AS embedding_model,
    (SELECT to_jsonb(r) - 'singleton' FROM reembedding r) AS reembedding
"""

# Only while a re-embed is under way does the second vector column exist.
_REEMBEDDED = """
SELECT count(m.embedding_next) AS filled, count(*) AS total FROM memories m
WHERE m.tenant_id = $1 AND ($2::text IS NULL OR m.source_repo = $2)
"""


class StatsRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def collect(self, source_repo: str | None, rules: PruneRules) -> dict[str, Any]:
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            _STATS,
            self._uow.tenant_id,
            source_repo,
            rules.unused_days,
            rules.stale_days,
            rules.stale_min_accesses,
        )
        reembedding = row["reembedding"]
        if reembedding is not None:
            progress = await conn.fetchrow(_REEMBEDDED, self._uow.tenant_id, source_repo)
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
