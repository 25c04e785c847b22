"""The search, the write path's near-duplicate check and tidy read the nearest memories
through one function, memory_nearest(): each caller's read is one call of it (the server
counts the calls: track_functions), and each walks a repository's own HNSW graph when its
scope is that repository (a behaviour of the one read the near-duplicate check and tidy
did not have when they read on their own)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import pytest

from app.db.pool import prepare_session
from app.db.unit_of_work import Database, UnitOfWork, unit_of_work
from app.domain.filters import MemoryFilter
from app.domain.memory import NewMemory
from app.repository.memories import MemoryRepository
from app.repository.search import SearchRepository
from app.repository.search_statement import SearchParams
from app.repository.sql import hnsw_index
from app.repository.tidy import TidyRepository
from tests.helpers.vectors import unit

TENANT = "one-nearest-read"
REPO = "acme/one-read"
CALLS = "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname = $1"
SCANS = "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname = $1"


@pytest.fixture
async def graph(db: asyncpg.Connection) -> AsyncIterator[str]:
    """A repository of 40 memories with a graph of its own (as `agent-memory graphs` builds
    one), and the graph's name."""
    rng = random.Random(3)
    await db.executemany(
        "INSERT INTO memories (tenant_id, source_repo, content, content_hash, embedding)"
        " VALUES ($1, $2, $3, memory_content_hash($3), $4)",
        [(TENANT, REPO, f"one read memory {i}", unit(rng)) for i in range(40)],
    )
    await db.execute("ANALYZE memories")
    name = await db.fetchval("SELECT memory_repository_graph_name($1, $2)", TENANT, REPO)
    await db.execute(
        f'CREATE INDEX "{name}" ON memories {hnsw_index("embedding")}'
        f" WHERE tenant_id = '{TENANT}' AND source_repo = '{REPO}'"
    )
    yield name
    await db.execute(f'DROP INDEX "{name}"')
    await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    """The service's session on one connection, whose function calls the server counts."""

    async def init(conn: asyncpg.Connection) -> None:
        await prepare_session(conn, ef_search=100, vector_exact_factor=500.0)

    async def keep_settings(conn: asyncpg.Connection) -> None:
        """Not asyncpg's RESET ALL, as the service's pool (app/db/pool.py)."""

    pool = await asyncpg.create_pool(
        database_url, min_size=1, max_size=1, init=init, reset=keep_settings,
        server_settings={"track_functions": "all"},
    )  # fmt: skip
    try:
        yield Database(pool)
    finally:
        await pool.close()


async def counts(database: Database, db: asyncpg.Connection, graph: str) -> tuple[int, int]:
    """memory_nearest()'s calls so far, and the repository graph's scans."""
    async with database.connection() as conn:
        await conn.execute("SELECT pg_stat_force_next_flush()")  # flushed before it answers
    await db.execute("SELECT pg_stat_clear_snapshot()")
    return (
        int(await db.fetchval(CALLS, "memory_nearest")),
        int(await db.fetchval(SCANS, graph)),
    )


async def search(uow: UnitOfWork) -> Any:
    params = SearchParams("one read memory", unit(random.Random(5)), 1.0, 5, 10, 200, 0.0, 30,
                          False)  # fmt: skip
    return await SearchRepository(uow).search(MemoryFilter(source_repo=REPO), params)


async def near_duplicates(uow: UnitOfWork) -> Any:
    new = NewMemory("one read memory, again", source_repo=REPO)
    found = await MemoryRepository(uow).nearest_each([(new, unit(random.Random(6)))])
    assert found[0]  # its nearest, from the repository's graph
    return found


async def tidy(uow: UnitOfWork) -> Any:
    pairs, last = await TidyRepository(uow).near_pairs(REPO, None, 500, 3, 0.0)
    assert pairs and last is not None
    return pairs


@pytest.mark.parametrize(
    "caller", [search, near_duplicates, tidy], ids=["search", "near-duplicates", "tidy"]
)
async def test_each_caller_reads_through_the_one_function_and_the_repositorys_graph(
    database: Database,
    db: asyncpg.Connection,
    graph: str,
    caller: Callable[[UnitOfWork], Awaitable[Any]],
) -> None:
    calls, scans = await counts(database, db, graph)
    async with unit_of_work(database, TENANT) as uow:
        # On 40 rows the planner would sort; with sorting priced out it walks the graph
        # wherever the statement lets it.
        await uow.connection({"enable_sort": "off"})
        await caller(uow)
    after_calls, after_scans = await counts(database, db, graph)
    assert after_calls == calls + 1  # one read, for all its vectors
    assert after_scans > scans
