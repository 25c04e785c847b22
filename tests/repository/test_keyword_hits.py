"""A term's keyword hits are read through the GIN index, whichever tenant calls and
however the tenants' rows are spread: memory_keyword_postings() plans its read for each
call's own tenant and terms. Kept per connection (a reader before it), a plan was the
first caller's tenant's; and planned for no tenant in particular, an average tenant's."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from app.db.migrations import upgrade_head_async

LARGE = "keyword-large"
EMPTY = "keyword-empty"
HITS = """
SELECT jsonb_array_length(
    memory_keyword_postings($1, $2, 200, NULL::memory_filter, false) -> $2)
"""
# The table's pages this transaction has read (from shared buffers or from disk).
PAGES_READ = "SELECT pg_stat_get_xact_blocks_fetched('memories'::regclass)"


async def tenants_database(scratch_database: Any, small_tenants: int) -> str:
    """A database of its own (its statistics are the test's): a large tenant whose rows
    hold one rare term once, beside `small_tenants` tenants of two rows each."""
    url: str = await scratch_database("agent_memory_keyword_plans")
    await upgrade_head_async(url)
    conn = await asyncpg.connect(url)
    try:
        large = [f"deploy note {i}: restart the worker after the migration" for i in range(600)]
        large[0] += " zanzibar"
        rows = [(LARGE, content) for content in large] + [
            (f"keyword-small-{t}", f"small tenant {t} note {i}")
            for t in range(small_tenants)
            for i in range(2)
        ]
        await conn.executemany(
            "INSERT INTO memories (tenant_id, content, content_hash)"
            " VALUES ($1, $2, memory_content_hash($2))",
            rows,
        )
        await conn.execute("ANALYZE memories")
    finally:
        await conn.close()
    return url


async def hits(conn: asyncpg.Connection, tenant: str, term: str) -> tuple[int, int]:
    """The term's hits for the tenant, and the table's pages that read."""
    async with conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', $1, true)", tenant)
        found = await conn.fetchval(HITS, tenant, term)
        return int(found), int(await conn.fetchval(PAGES_READ))


@pytest.mark.parametrize(
    ("small_tenants", "first_caller"),
    [
        (0, EMPTY),  # a tenant with no rows calls first on the connection
        (8000, LARGE),  # the large tenant is one of many, nearly all of them small
    ],
)
async def test_a_large_tenants_rare_term_reads_one_page(
    scratch_database: Any, small_tenants: int, first_caller: str
) -> None:
    url = await tenants_database(scratch_database, small_tenants)
    conn = await asyncpg.connect(url)
    try:
        # As the search runs: its statement planned once per connection.
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        await hits(conn, first_caller, "zanzibar")
        # The rare term is one posting in the index: its row's page is read, not each of
        # the large tenant's pages in turn (34 of them, and 68 among the small tenants).
        found, pages = await hits(conn, LARGE, "zanzibar")
        assert found == 1
        assert pages <= 2
    finally:
        await conn.close()
