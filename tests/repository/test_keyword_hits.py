"""A term's keyword hits are read through the GIN index whichever tenant's search made the
connection's plan: a connection keeps the plan of memory_keyword_hits() it made first, and
that plan must not have been made for the first caller's tenant."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from app.db.migrations import upgrade_head_async

LARGE = "keyword-large"
EMPTY = "keyword-empty"
ROWS = 600
HITS = """
SELECT count(*) FROM memory_keyword_hits(
    to_tsquery('english', $1), 200, NULL, NULL, NULL, NULL, NULL, false, true)
"""
# The table's pages this transaction has read (from shared buffers or from disk).
PAGES_READ = "SELECT pg_stat_get_xact_blocks_fetched('memories'::regclass)"


@pytest.fixture
async def tenants(scratch_database: Any) -> str:
    """A database of its own (its statistics are the test's): one tenant with rows, and the
    statistics saying so; another with none."""
    url: str = await scratch_database("agent_memory_keyword_plans")
    await upgrade_head_async(url)
    conn = await asyncpg.connect(url)
    try:
        contents = [f"deploy note {i}: restart the worker after the migration" for i in range(ROWS)]
        contents[0] += " zanzibar"  # the one row that holds the rare term
        await conn.executemany(
            "INSERT INTO memories (tenant_id, content, content_hash)"
            " VALUES ($1, $2, memory_content_hash($2))",
            [(LARGE, content) for content in contents],
        )
        await conn.execute("ANALYZE memories")
    finally:
        await conn.close()
    return url


async def pages_read_for_rare_term(conn: asyncpg.Connection) -> int:
    async with conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", LARGE)
        assert await conn.fetchval(HITS, "zanzibar") == 1
        return int(await conn.fetchval(PAGES_READ))


async def test_a_plan_made_for_an_empty_tenant_does_not_walk_a_large_one(tenants: str) -> None:
    conn = await asyncpg.connect(tenants)
    try:
        # As the search runs it: one plan per connection, made at the first call.
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        async with conn.transaction():
            await conn.execute("SELECT set_config('app.tenant_id', $1, true)", EMPTY)
            assert await conn.fetchval(HITS, "zanzibar") == 0
        # The large tenant's rare term is one posting in the index: its row's page is read,
        # not each of the tenant's pages in turn (34 of them).
        assert await pages_read_for_rare_term(conn) <= 2
    finally:
        await conn.close()
