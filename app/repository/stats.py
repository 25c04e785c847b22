"""/stats in one round trip: one pass over the scope for every count, a range of the recent
rows for the days charted, one look at the access counts for the most used."""

from __future__ import annotations

from typing import Any

from app.db.unit_of_work import UnitOfWork
from app.repository.lifecycle import PRUNABLE, PruneRules
from app.repository.rows import QUARANTINED, SERVABLE
from app.repository.sql import named

# The tenant's memories, or one repository's: two statements, not one with
# `(:source_repo IS NULL OR ...)`, whose generic plan (chosen after a few calls on a
# pooled connection) could not take the repository to the index and read the whole tenant.
_SCOPES = {
    False: "m.tenant_id = :tenant_id",
    True: "m.tenant_id = :tenant_id AND m.source_repo = :source_repo",
}

# The days a stats answer charts, today (UTC) included.
DAYS_CHARTED = 30
# The first of them, as a time (UTC days: the console says so).
_CHART_START = f"(((now() AT TIME ZONE 'UTC')::date - {DAYS_CHARTED - 1}) AT TIME ZONE 'UTC')"


def _stats(one_repository: bool) -> str:
    scope = _SCOPES[one_repository]
    sessions = "s.source_repo = :source_repo" if one_repository else "true"
    return f"""
WITH counts AS (
    -- One scan, two groupings: the combinations the service rolls up by type, trust and
    -- confidence (a few dozen rows), and each repository.
    SELECT m.memory_type, m.trust_level, m.confidence, m.source_repo,
           GROUPING(m.source_repo) = 0 AS per_repository,
           count(*) AS total,
           count(*) FILTER (WHERE memory_is_live(m)) AS active,
           count(*) FILTER (WHERE m.archived_at IS NOT NULL) AS archived,
           count(*) FILTER (WHERE m.superseded_by IS NOT NULL) AS superseded,
           count(*) FILTER (WHERE m.pinned) AS pinned,
           count(*) FILTER (WHERE {QUARANTINED}) AS quarantined,
           count(*) FILTER (WHERE m.held_at IS NOT NULL) AS held
    FROM memories m
    WHERE {scope}
    GROUP BY GROUPING SETS ((m.memory_type, m.trust_level, m.confidence), (m.source_repo))
),
stored_by_day AS (
    -- The charted days only: a range of the (tenant, [repository,] created_at) index.
    SELECT (m.created_at AT TIME ZONE 'UTC')::date AS stored_on, count(*) AS stored
    FROM memories m
    WHERE {scope} AND m.created_at >= {_CHART_START}
    GROUP BY 1
),
sessions_by_day AS (
    SELECT (s.started_at AT TIME ZONE 'UTC')::date AS started_on, count(*) AS sessions
    FROM sessions s
    WHERE s.tenant_id = :tenant_id AND {sessions}
      AND s.started_at >= {_CHART_START}
    GROUP BY 1
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
        WHERE a.tenant_id = :tenant_id AND {scope}
          AND a.access_count > 0 AND memory_is_live(m)
          AND {SERVABLE}  -- a quarantined or altered row's text is shown to no one here
    ) t
    WHERE t.nth <= 10
)
SELECT
    (SELECT coalesce(jsonb_agg(to_jsonb(c)), '[]'::jsonb) FROM counts c) AS counts,
    (SELECT coalesce(jsonb_agg(to_jsonb(d)), '[]'::jsonb) FROM stored_by_day d) AS stored_by_day,
    (SELECT coalesce(jsonb_agg(to_jsonb(d)), '[]'::jsonb) FROM sessions_by_day d)
        AS sessions_by_day,
    (now() AT TIME ZONE 'UTC')::date AS today,
    -- Health signals and the next prune read their own partial indexes, not the table.
    (SELECT jsonb_build_object(
        'missing_embedding', count(*) FILTER (WHERE m.embedding IS NULL),
        'missing_search_vector', count(*) FILTER (WHERE m.search_vector IS NULL))
     FROM memories m
     WHERE {scope}
       AND (m.embedding IS NULL OR m.search_vector IS NULL)) AS incomplete,
    (SELECT count(*) FROM memories m
     WHERE {scope}
       AND {QUARANTINED}) AS quarantined,
    (SELECT count(*) FROM memories m
     WHERE {scope} AND {PRUNABLE}) AS prunable,
    (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.memory_type, t.access_count DESC),
                     '[]'::jsonb) FROM top_accessed t) AS top_accessed,
    (SELECT e.name FROM embedding_model e) AS embedding_model,
    (SELECT to_jsonb(r) - 'singleton' FROM reembedding r) AS reembedding
"""


_STATS = {one: _stats(one) for one in (False, True)}

# Only while a re-embed is under way does the second vector column exist.
_REEMBEDDED = {
    one: f"SELECT count(m.embedding_next) AS filled, count(*) AS total FROM memories m"
    f" WHERE {scope}"
    for one, scope in _SCOPES.items()
}


class StatsRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def collect(self, source_repo: str | None, rules: PruneRules) -> dict[str, Any]:
        conn = await self._uow.connection()
        one = source_repo is not None
        scope = {"tenant_id": self._uow.tenant_id} | ({"source_repo": source_repo} if one else {})
        row = await conn.fetchrow(*named(_STATS[one], scope | rules.values()))
        reembedding = row["reembedding"]
        if reembedding is not None:
            progress = await conn.fetchrow(*named(_REEMBEDDED[one], scope))
            reembedding |= {"filled": progress["filled"], "total": progress["total"]}
        return {
            "reembedding": reembedding,
            "counts": row["counts"],
            "stored_by_day": row["stored_by_day"],
            "sessions_by_day": row["sessions_by_day"],
            "today": row["today"],
            "top_accessed": row["top_accessed"],
            "incomplete": row["incomplete"],
            "quarantined": row["quarantined"],
            "prunable": row["prunable"],
            "embedding_model": row["embedding_model"],
        }
