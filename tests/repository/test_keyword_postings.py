"""memory_keyword_postings(), the keyword side a Citus search reads on the tenant's worker:
a term the statistics of the table holding the tenant's rows call common is not read (a GIN
scan reads its whole posting list first) and comes back as its frequency there."""

from __future__ import annotations

import asyncpg
import httpx
import pytest

from app.db.pool import prepare_session
from app.db.unit_of_work import set_local

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus


async def test_a_common_term_comes_back_as_its_frequency_and_a_rare_one_as_its_hits(
    api: httpx.AsyncClient, db: asyncpg.Connection, database_url: str
) -> None:
    # (`api`: the tables are emptied after the test.)
    rows = [f"a zebra note {i}" for i in range(60)] + ["a zebra crossing", "zebra crossing"]
    await db.executemany(
        "INSERT INTO memories (tenant_id, content, content_hash, source_repo)"
        " VALUES ('a', $1, memory_content_hash($1), NULL)",
        [(content,) for content in rows],
    )
    await db.execute("ANALYZE memories")  # on Citus, each shard's own statistics
    # At most 2 rows a term: common is more than 10 rows by the statistics.
    ask = "SELECT memory_keyword_postings('a', $1, 2, NULL::memory_filter, $2)"
    conn = await asyncpg.connect(database_url)
    try:
        await prepare_session(conn, ef_search=40)
        async with conn.transaction():
            await set_local(conn, {"app.tenant_id": "a"})
            answer = await conn.fetchval(ask, "zebra crossings", False)
            # Only common terms: a keyword-only search reads the rows holding all of them.
            only_common = await conn.fetchval(ask, "zebra notes", True)
            hybrid = await conn.fetchval(ask, "zebra notes", False)
            holding = await conn.fetch(
                "SELECT content FROM memories WHERE id = ANY($1::uuid[])", only_common[""]
            )
    finally:
        await conn.close()
    assert answer["zebra"] == pytest.approx(1.0)  # in every row: its frequency, no ids
    assert len(answer["cross"]) == 2  # two rows: read, as ids
    assert set(only_common) == {"zebra", "note", ""} and set(hybrid) == {"zebra", "note"}
    assert len(holding) == 2 and all("zebra note" in row["content"] for row in holding)
