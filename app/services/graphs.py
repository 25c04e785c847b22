"""Repositories' own HNSW graphs, kept as app/domain/graphs.py says, by `agent-memory
graphs` and by the service's schedule, as the database's owner."""

from __future__ import annotations

import logging
from collections.abc import Callable

import asyncpg

from app.domain.graphs import GraphPlan, RepositoryGraph, graph_plan
from app.repository.graphs import GraphRepository

logger = logging.getLogger("agent_memory.graphs")


class RepositoryGraphs:
    """On a connection as the database's owner (not in a transaction)."""

    def __init__(self, conn: asyncpg.Connection, min_rows: int) -> None:
        self._repo = GraphRepository(conn)
        self._min_rows = min_rows

    async def plan(self) -> GraphPlan:
        return graph_plan(await self._repo.graphs(self._min_rows), self._min_rows)

    async def apply(
        self, plan: GraphPlan, done: Callable[[str, RepositoryGraph], None] | None = None
    ) -> bool:
        """Drops, then builds, each as its own statement; false when another builder holds
        the lock (nothing done)."""
        if not await self._repo.try_lock():
            return False
        try:
            for graph in plan.drop:
                await self._repo.drop(graph.name)
                if done:
                    done("dropped", graph)
            for graph in plan.build:
                await self._repo.build(graph)
                if done:
                    done("built", graph)
        finally:
            await self._repo.unlock()
        return True


async def keep_graphs_quietly(owner_url: str | None, min_rows: int) -> None:
    """The schedule's pass: failures are logged, never raised (a login that is not the
    table's owner cannot build: `agent-memory graphs` then, as the owner)."""
    if owner_url is None:
        return
    try:
        conn = await asyncpg.connect(owner_url)
    except Exception:
        logger.warning("repository graphs: no connection", exc_info=True)
        return
    try:
        graphs = RepositoryGraphs(conn, min_rows)
        plan = await graphs.plan()
        if plan.build or plan.drop:
            await graphs.apply(
                plan,
                lambda act, g: logger.info(
                    "repository graph", extra={"act": act, "graph": g.name, "rows": g.live_rows}
                ),
            )
    except asyncpg.InsufficientPrivilegeError:
        logger.warning(
            "repository graphs: this login does not own the memories table; run"
            " `agent-memory graphs` as the owner"
        )
    except Exception:
        logger.warning("repository graphs could not be kept", exc_info=True)
    finally:
        await conn.close()
