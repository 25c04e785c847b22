"""A large repository gets an HNSW graph of its own, which its searches walk instead of
reading it whole (migration 0043, app/services/graphs.py); a repository that shrinks loses
it. The nearest come first either way, with the repository's global memories beside them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import numpy as np
import pytest
from fastapi import FastAPI
from pgvector.asyncpg import register_vector

from app.db.migrations import downgrade, upgrade_head_async
from app.db.unit_of_work import quote_literal, unit_of_work
from app.domain.filters import MemoryFilter
from app.domain.graphs import RepositoryGraph, graph_plan
from app.repository.search import SearchRepository
from app.repository.search_statement import SearchParams
from app.services.graphs import GraphKeeper, keep_graphs_quietly

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

TENANT = "graph-test"
BIG = "acme/o'brien-\u00fcber"  # a quote and a non-ASCII letter: the predicate's literal
CALL = """
SELECT c.id, m.content FROM memory_vector_candidates(
    $1::vector, 10, NULL::tsquery, $2,
    jsonb_populate_record(NULL::memory_filter,
                          jsonb_build_object('repo', $3::text, 'with_global', $4::boolean))) c
JOIN memories m ON m.id = c.id
"""


GRAPH_SCANS = """
SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname = $1
"""


async def insert(
    db: asyncpg.Connection, repo: str | None, count: int, seed: int, tenant: str = TENANT
) -> dict[str, np.ndarray]:
    vectors = np.random.default_rng(seed).normal(size=(count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = {f"{repo or 'global'} {tenant} {i}": v for i, v in enumerate(vectors)}
    await db.executemany(
        "INSERT INTO memories (tenant_id, source_repo, content, content_hash, embedding)"
        " VALUES ($1, $2, $3, memory_content_hash($3), $4)",
        [(tenant, repo, content, vector) for content, vector in rows.items()],
    )
    return rows


@pytest.fixture
async def memories(db: asyncpg.Connection) -> AsyncIterator[dict[str, dict[str, np.ndarray]]]:
    """300 memories in BIG, 40 in a small repository, 30 global; another tenant's BIG."""
    rows = {
        "big": await insert(db, BIG, 300, seed=1),
        "small": await insert(db, "acme/small", 40, seed=2),
        "global": await insert(db, None, 30, seed=3),
        "other": await insert(db, BIG, 40, seed=4, tenant="graph-test-other"),
    }
    await db.execute("ANALYZE memories")
    yield rows
    await GraphKeeper(db, 0).keep()  # drops all
    await db.execute("DELETE FROM memories WHERE tenant_id LIKE 'graph-test%'")
    # Dead entries left in the tenant's graph would change the walks of the tests after.
    await db.execute("VACUUM ANALYZE memories")


def exact_top(rows: dict[str, np.ndarray], query: np.ndarray, k: int = 10) -> list[str]:
    return sorted(rows, key=lambda content: -float(rows[content] @ query))[:k]


async def graph_name(db: asyncpg.Connection, tenant: str, repo: str) -> str:
    name: str = await db.fetchval("SELECT memory_repository_graph_name($1, $2)", tenant, repo)
    return name


async def scans(db: asyncpg.Connection, name: str) -> int:
    await db.execute("SELECT pg_stat_force_next_flush()")
    await db.execute("SELECT pg_stat_clear_snapshot()")
    return int(await db.fetchval(GRAPH_SCANS, name))


async def nearest(
    db: asyncpg.Connection, query: np.ndarray, repo: str, with_global: bool
) -> list[str]:
    async with db.transaction():
        # Within the exact bound on this small table: without its own graph, the repository
        # would be read whole. Sorting priced out, as in test_vector_candidates.py: on 300
        # rows the planner would sort rather than read a graph it may take.
        await db.execute("SET LOCAL app.vector_exact_factor = 10000")
        await db.execute("SET LOCAL enable_sort = off")
        await db.execute("SET LOCAL hnsw.ef_search = 200")  # the service's sessions' order
        rows = await db.fetch(CALL, query, TENANT, repo, with_global)
    return [row["content"] for row in rows]


@pytest.mark.single_node  # reads one PostgreSQL's index counters and calls the function there
async def test_a_repository_with_a_graph_of_its_own_is_walked_there(
    db: asyncpg.Connection, memories: dict[str, dict[str, np.ndarray]]
) -> None:
    graphs = GraphKeeper(db, min_rows=100)
    plan = await graphs.plan()
    assert [(g.tenant_id, g.source_repo, g.live_rows) for g in plan.build] == [(TENANT, BIG, 300)]
    name = await graph_name(db, TENANT, BIG)
    query = np.random.default_rng(99).normal(size=384).astype(np.float32)
    query /= np.linalg.norm(query)
    before_graph = await nearest(db, query, BIG, with_global=False)
    assert (
        await db.fetchval("SELECT memory_repository_graph($1, $2, 'memories')", TENANT, BIG)
        is False
    )
    assert await graphs.keep() == plan
    assert await db.fetchval("SELECT memory_repository_graph($1, $2, 'memories')", TENANT, BIG)
    # Another tenant's repository of the same name has none.
    assert not await db.fetchval(
        "SELECT memory_repository_graph('graph-test-other', $1, 'memories')", BIG
    )
    scanned = await scans(db, name)
    own = await nearest(db, query, BIG, with_global=False)
    assert await scans(db, name) == scanned + 1
    assert own == before_graph == exact_top(memories["big"], query)
    # A small repository is still read whole: the graph is not touched.
    small_query = memories["small"]["acme/small graph-test 3"]
    assert (await nearest(db, small_query, "acme/small", with_global=True))[0] == (
        "acme/small graph-test 3"
    )
    assert await scans(db, name) == scanned + 1


@pytest.mark.single_node
async def test_a_repositorys_global_memories_rank_beside_its_own_graphs(
    db: asyncpg.Connection, memories: dict[str, dict[str, np.ndarray]]
) -> None:
    graphs = GraphKeeper(db, min_rows=100)
    assert await graphs.keep()
    # A query between a global memory and the repository's: both sides' nearest, in order.
    scope = {**memories["big"], **memories["global"]}
    for seed in range(5):
        noise = np.random.default_rng(100 + seed).normal(size=384).astype(np.float32)
        query = memories["global"]["global graph-test 7"] + 0.8 * noise / np.linalg.norm(noise)
        query /= np.linalg.norm(query)
        found = await nearest(db, query, BIG, with_global=True)
        assert found == exact_top(scope, query)
        assert found[0] == "global graph-test 7"
        assert not any(content.startswith("acme/small") for content in found)


async def test_graphs_are_built_for_large_repositories_and_dropped_when_they_shrink(
    db: asyncpg.Connection,
    memories: dict[str, dict[str, np.ndarray]],
    app: FastAPI,
    distributed: bool,
) -> None:
    graphs = GraphKeeper(db, min_rows=100)
    assert await graphs.keep()
    again = await graphs.plan()
    assert again.build == again.drop == [] and [g.source_repo for g in again.keep] == [BIG]
    if distributed:  # each shard holds a copy of the index, under the shard's number
        asked = (
            f"SELECT memory_repository_graph({quote_literal(TENANT)}, {quote_literal(BIG)}, '%s')"
        )
        answers = await db.fetch("SELECT result FROM run_command_on_shards('memories', $1)", asked)
        assert answers and all(row["result"] == "t" for row in answers)
    # Through the service's search, on either back end: the nearest, with the globals.
    query = memories["big"]["acme/o'brien-\u00fcber graph-test 12"]
    params = SearchParams("", list(query), 1.0, 10, 50, 200, 0.0, 30.0, False)
    async with unit_of_work(app.state.runtime.database, TENANT) as uow:
        outcome = await SearchRepository(uow).search(MemoryFilter(source_repo=BIG), params)
    scope = {**memories["big"], **memories["global"]}
    assert [h.memory.content for h in outcome.hits] == exact_top(scope, query)
    # Archived below half the threshold (49 live of 100): its graph goes.
    await db.execute(
        "UPDATE memories SET archived_at = now() WHERE tenant_id = $1 AND source_repo = $2"
        " AND content NOT IN (SELECT content FROM memories WHERE tenant_id = $1"
        " AND source_repo = $2 ORDER BY content LIMIT 49)",
        TENANT,
        BIG,
    )
    shrunk = await graphs.plan()
    assert [(g.source_repo, g.live_rows) for g in shrunk.drop] == [(BIG, 49)]
    assert await graphs.keep() == shrunk
    assert (await graphs.plan()) == graph_plan([], 100)
    name = await graph_name(db, TENANT, BIG)
    assert await db.fetchval("SELECT count(*) FROM pg_class WHERE relname = $1", name) == 0


async def test_the_schedule_builds_them_as_the_login_the_service_connects_as(
    db: asyncpg.Connection,
    memories: dict[str, dict[str, np.ndarray]],
    app: FastAPI,
    database_url: str,
) -> None:
    name = await graph_name(db, TENANT, BIG)
    made = "SELECT count(*) FROM pg_class WHERE relname = $1"
    await keep_graphs_quietly(None, 100)  # a service that logs in as its own role: nothing
    assert await db.fetchval(made, name) == 0
    owner_url = app.state.runtime.owner_url
    assert owner_url == database_url  # it logs in as the owner, then sets its role
    await keep_graphs_quietly(owner_url, 100)
    assert await db.fetchval(made, name) == 1


@pytest.mark.single_node  # a scratch database of its own, taken down and up again
async def test_the_migrations_downgrade_drops_every_graph(scratch_database: Any) -> None:
    url: str = await scratch_database("agent_memory_graph_downgrade")
    await upgrade_head_async(url)
    conn = await asyncpg.connect(url)
    await register_vector(conn)
    try:
        await insert(conn, BIG, 6, seed=5)
        graphs = GraphKeeper(conn, min_rows=5)
        assert await graphs.keep()
        built = "SELECT count(*) FROM pg_class WHERE relname LIKE 'memories\\_graph\\_%'"
        assert await conn.fetchval(built) == 1
        await asyncio.to_thread(downgrade, url, "0042")
        assert await conn.fetchval(built) == 0
        await upgrade_head_async(url)
        assert (await graphs.plan()).build  # built again by the next pass
    finally:
        await conn.close()


def graph(rows: int, built: bool = False, valid: bool = True) -> RepositoryGraph:
    return RepositoryGraph("memories_graph_x", "t", "r", rows, built, built and valid)


def test_the_plan_builds_at_the_threshold_and_drops_below_half_of_it() -> None:
    plan = graph_plan([graph(100), graph(99), graph(50, built=True), graph(49, built=True)], 100)
    assert [g.live_rows for g in plan.build] == [100]
    assert [g.live_rows for g in plan.keep] == [50]
    assert [g.live_rows for g in plan.drop] == [49]
    # An interrupted build (invalid) is built again; below the threshold, dropped.
    interrupted = graph_plan([graph(120, True, False), graph(60, True, False)], 100)
    assert [g.live_rows for g in interrupted.build] == [120]
    assert [g.live_rows for g in interrupted.drop] == [60]
    # 0: no repository graphs, and every one built goes.
    assert graph_plan([graph(10_000), graph(10_000, built=True)], 0).drop == [graph(10_000, True)]
