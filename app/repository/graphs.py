"""A repository's own HNSW graph (migration 0043): a partial index of `memories` for one
tenant's repository, which memory_vector_candidates() walks when it is ready. Built and
dropped as the database's owner, not in a transaction (CREATE INDEX CONCURRENTLY), across
tenants: row-level security does not apply, and the indexes are the schema's own."""

from __future__ import annotations

from typing import Any

from app.db.unit_of_work import quote_literal
from app.domain.graphs import RepositoryGraph
from app.repository.rows import LIVE
from app.repository.sql import hnsw_index, named

# Enough for a repository's graph to be built in memory (pgvector builds on disk, far
# slower, once the graph outgrows maintenance_work_mem; its size a memory: docs/operations.md).
BUILD_MEMORY = "1GB"
_LOCK = "hashtext('memory graphs')"

# Each repository with live memories, its size and its graph's name, beside each graph
# built (by name): a repository that qualifies, or a graph whose repository no longer does.
_GRAPHS = f"""
WITH sizes AS (
    SELECT m.tenant_id, m.source_repo, count(*) AS live_rows
    FROM memories m
    WHERE m.source_repo IS NOT NULL AND {LIVE}
    GROUP BY m.tenant_id, m.source_repo
),
named AS (
    SELECT s.*, memory_repository_graph_name(s.tenant_id, s.source_repo) AS graph FROM sizes s
),
built AS (
    SELECT c.relname::text AS graph, i.indisvalid AS valid
    FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
    WHERE i.indrelid = 'public.memories'::regclass AND c.relname LIKE 'memories\\_graph\\_%'
)
SELECT coalesce(n.graph, b.graph) AS graph, n.tenant_id, n.source_repo,
       coalesce(n.live_rows, 0) AS live_rows, b.graph IS NOT NULL AS built,
       coalesce(b.valid, false) AS valid
FROM named n FULL JOIN built b USING (graph)
WHERE (n.live_rows >= :min_rows AND :min_rows > 0) OR b.graph IS NOT NULL
ORDER BY live_rows DESC, graph
"""


class GraphRepository:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def graphs(self, min_rows: int) -> list[RepositoryGraph]:
        """Every graph built, and every repository of at least `min_rows` live memories
        (none for 0)."""
        rows = await self._conn.fetch(*named(_GRAPHS, {"min_rows": min_rows}))
        return [
            RepositoryGraph(
                row["graph"], row["tenant_id"], row["source_repo"], row["live_rows"],
                row["built"], row["valid"],
            )
            for row in rows
        ]  # fmt: skip

    async def build(self, graph: RepositoryGraph) -> None:
        """Without blocking writes; an interrupted build's invalid index is dropped first."""
        assert graph.tenant_id is not None and graph.source_repo is not None
        await self.drop_graph(graph)
        await self._conn.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
        await self._conn.execute(
            f'CREATE INDEX CONCURRENTLY "{graph.name}" ON memories {hnsw_index("embedding")}'
            f" WHERE tenant_id = {quote_literal(graph.tenant_id)}"
            f" AND source_repo = {quote_literal(graph.source_repo)}"
        )

    async def drop_graph(self, graph: RepositoryGraph) -> None:
        await self._conn.execute(f'DROP INDEX CONCURRENTLY IF EXISTS public."{graph.name}"')

    async def try_lock(self) -> bool:
        """One builder at a time, across servers (a session's lock: `unlock` it)."""
        locked = await self._conn.fetchval(f"SELECT pg_try_advisory_lock({_LOCK})")
        return bool(locked)

    async def unlock(self) -> None:
        await self._conn.execute(f"SELECT pg_advisory_unlock({_LOCK})")
