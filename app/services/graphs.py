"""Repositories' own HNSW graphs, kept as app/domain/graphs.py says, by `agent-memory
graphs` and by the service's schedule, as the database's owner."""

from __future__ import annotations

import logging
from collections.abc import Callable

import asyncpg

from app.domain.graphs import GraphPlan, RepositoryGraph, graph_plan
from app.repository.graphs import GraphRepository

logger = logging.getLogger("agent_memory.graphs")
# Told what was done to a graph ("dropped", "built"), as it is done.
Done = Callable[[str, RepositoryGraph], None]


class GraphKeeper:
    """Builds the HNSW graph of each repository large enough to have one and drops those
    of repositories that shrank (app/domain/graphs.py's plan; their SQL is GraphRepository's),
    on a connection as the database's owner (not in a transaction)."""

    def __init__(self, conn: asyncpg.Connection, min_rows: int) -> None:
        self._repo = GraphRepository(conn)
        self._min_rows = min_rows

    async def plan(self) -> GraphPlan:
        return graph_plan(await self._repo.graphs(self._min_rows), self._min_rows)

    async def keep(self, done: Done | None = None) -> GraphPlan | None:
        """The plan carried out: drops, then builds, each as its own statement, each told
        to `done` as it ends; None when another builder holds the lock (nothing done)."""
        if not await self._repo.try_lock():
            return None
        try:
            plan = await self.plan()
            for act, graphs, run in (
                ("dropped", plan.drop, self._repo.drop_graph),
                ("built", plan.build, self._repo.build),
            ):
                for graph in graphs:
                    await run(graph)
                    if done:
                        done(act, graph)
        finally:
            await self._repo.unlock()
        return plan


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
        await GraphKeeper(conn, min_rows).keep(
            lambda act, g: logger.info(
                "repository graph", extra={"act": act, "graph": g.name, "rows": g.live_rows}
            )
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
