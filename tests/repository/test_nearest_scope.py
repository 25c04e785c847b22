"""The near-duplicate check at write reads a repository small beside the graph whole, by
exact distance, and a larger one through the graph: the one read of the nearest within a
scope (memory_nearest()) with the search's rule (memory_vector_exact_bound()) at its own
scale, whatever the planner would make of the repository."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from pgvector import Vector

from app.repository.nearest import NEAREST_GRAPH_DIVISOR, near_duplicates
from app.repository.sql import named
from tests.helpers.vectors import (
    exact_top,
    factor_for_bound,
    hnsw_scans,
    insert_units,
    unit,
)

TENANT = "nearest-scope-test"
REPO = "acme/small"


@pytest.fixture
async def repository(db: asyncpg.Connection) -> AsyncIterator[dict[str, list[float]]]:
    yield await insert_units(db, TENANT, REPO, "repository memory", seed=11)
    await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


async def nearest(
    db: asyncpg.Connection, queries: list[list[float]], bound: int, repo: str | None = REPO
) -> list[list[str]]:
    """The statement the store sends for these new memories of `repo` (one, or a chunk)."""
    one = len(queries) == 1
    # No model named: the vectors compare (memory_vector_fits()).
    statement, scope = near_duplicates(repo, distributed=False, one=one)
    values: dict[str, Any] = {"tenant_id": TENANT, "nearest": 3, "embedding_model": None, **scope}
    if one:
        values["embedding"] = queries[0]
    else:
        values["embeddings"] = [Vector(q) for q in queries]
    async with db.transaction():
        # The check's bound is the search's for a graph NEAREST_GRAPH_DIVISOR times smaller.
        factor = await factor_for_bound(db, bound) * NEAREST_GRAPH_DIVISOR
        await db.execute(f"SET LOCAL app.vector_exact_factor = {factor}")
        # On a table this small the planner would sort anyway; with sorting priced out it
        # walks the graph wherever the statement lets it.
        await db.execute("SET LOCAL enable_sort = off")
        rows = await db.fetch(*named(statement, values))
    found: list[list[str]] = [[] for _ in queries]
    for r in rows:
        if r["id"] is not None:
            found[r["ord"] - 1].append(r["content"])
    return found


@pytest.mark.parametrize("chunk", [1, 5])
async def test_a_repository_within_the_bound_is_read_whole_and_a_larger_one_walks_the_graph(
    db: asyncpg.Connection, repository: dict[str, list[float]], chunk: int
) -> None:
    queries = [unit(random.Random(20 + i)) for i in range(chunk)]
    expected = [exact_top(repository, q)[:3] for q in queries]
    before = await hnsw_scans(db)
    assert await nearest(db, queries, bound=40) == expected  # 40 rows within 40
    assert await hnsw_scans(db) == before  # the graph was not read
    # 40 rows over a bound of 39: the graph, which on so few rows is exact too.
    assert await nearest(db, queries, bound=39) == expected
    assert await hnsw_scans(db) > before


async def test_a_repository_whose_names_do_not_fit_an_entry_is_read_from_its_rows(
    db: asyncpg.Connection,
) -> None:
    repo = "\U0001d11e" * 300  # past an entry's room beside a 384-dimension vector
    try:
        rows = await insert_units(db, TENANT, repo, "long name memory", seed=12)
        query = unit(random.Random(13))
        # Found: the index holds none of them, so a read of it would find nothing.
        assert await nearest(db, [query], bound=40, repo=repo) == [exact_top(rows, query)[:3]]
    finally:
        await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


async def test_a_global_memory_is_compared_with_the_global_ones_alone(
    db: asyncpg.Connection, repository: dict[str, list[float]]
) -> None:
    """Its scope is the tenant's memories of no repository, read exactly or through the
    graph: never the repository's, however near."""
    global_rows = await insert_units(db, TENANT, None, "global memory", seed=14)
    query = unit(random.Random(15))
    expected = [exact_top(global_rows, query)[:3]]
    before = await hnsw_scans(db)
    assert await nearest(db, [query], bound=40, repo=None) == expected  # 40 within 40
    assert await hnsw_scans(db) == before
    assert await nearest(db, [query], bound=39, repo=None) == expected
    assert await hnsw_scans(db) > before
