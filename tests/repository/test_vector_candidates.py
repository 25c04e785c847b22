"""The vector side reads a scope small beside the graph whole, by exact distance, and leaves
the HNSW graph alone; a larger scope takes the graph. Either way the nearest come first."""

from __future__ import annotations

import math
import random
from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import asyncpg
import pytest

from tests.helpers.vectors import exact_top, factor_for_bound, hnsw_scans, insert_units, unit

TENANT = "vector-scope-test"
CALL = """
SELECT id, vector_similarity FROM memory_vector_candidates(
    $1::vector, 10, NULL::tsquery, $2, NULL::memory_filter)
"""


@pytest.fixture
async def scope(db: asyncpg.Connection) -> AsyncIterator[dict[str, list[float]]]:
    yield await insert_units(db, TENANT, None, "memory", seed=7)
    await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


async def nearest(db: asyncpg.Connection, query: list[float], exact_factor: float) -> list[str]:
    async with db.transaction():
        await db.execute(f"SET LOCAL app.vector_exact_factor = {exact_factor}")
        # On a table this small the planner would sort rather than read the graph; with
        # sorting priced out it reads the graph wherever the query's form lets it.
        await db.execute("SET LOCAL enable_sort = off")
        rows = await db.fetch(CALL, query, TENANT)
    ids = [r["id"] for r in rows]
    names = {
        r["id"]: r["content"]
        for r in await db.fetch("SELECT id, content FROM memories WHERE id = ANY($1)", ids)
    }
    return [names[i] for i in ids]


async def test_a_small_scope_is_read_whole_by_exact_distance(
    db: asyncpg.Connection, scope: dict[str, list[float]]
) -> None:
    query = unit(random.Random(8))
    before = await hnsw_scans(db)
    # 40 rows within a bound of 40.
    exact = await factor_for_bound(db, 40)
    assert await nearest(db, query, exact_factor=exact) == exact_top(scope, query)
    assert await hnsw_scans(db) == before  # the graph was not read
    await nearest(db, query, exact_factor=0)
    assert await hnsw_scans(db) > before  # where the graph's form is taken, it is


async def test_a_scope_larger_than_the_bound_takes_the_graph_and_finds_the_nearest(
    db: asyncpg.Connection, scope: dict[str, list[float]]
) -> None:
    query = unit(random.Random(9))
    before = await hnsw_scans(db)
    # 40 rows over a bound of 39: counted, found too many, and the graph's form is taken;
    # on so few rows the graph is exact too.
    assert await nearest(db, query, await factor_for_bound(db, 39)) == exact_top(scope, query)
    assert await hnsw_scans(db) > before


TAGGED_CALL = """
SELECT id FROM memory_vector_candidates(
    $1::vector, 10, NULL::tsquery, $2,
    jsonb_populate_record(NULL::memory_filter, jsonb_build_object('tags', $3::text[])))
"""


async def test_a_rare_tag_is_read_whole_though_its_tenant_is_not_small(
    db: asyncpg.Connection, scope: dict[str, list[float]]
) -> None:
    tagged = sorted(scope)[:6]
    await db.execute(
        "UPDATE memories SET tags = '{rare-vector-tag}' WHERE tenant_id = $1 AND content = ANY($2)",
        TENANT,
        tagged,
    )
    await db.execute("ANALYZE memories")  # the tag's share comes from the statistics
    share = await db.fetchval("SELECT memory_tags_share('{rare-vector-tag}', 'memories')")
    graph_rows = await db.fetchval("SELECT reltuples FROM pg_class WHERE relname = 'memories'")
    bound = math.ceil(share * graph_rows)
    assert 3 <= bound < len(scope)  # counted by tenant, the scope would take the graph
    query = unit(random.Random(10))
    kept = {content: scope[content] for content in tagged}

    async def tagged_nearest(bound: int) -> list[str]:
        async with db.transaction():
            await db.execute(
                f"SET LOCAL app.vector_exact_factor = {await factor_for_bound(db, bound)}"
            )
            await db.execute("SET LOCAL enable_sort = off")  # as in nearest()
            rows = await db.fetch(TAGGED_CALL, query, TENANT, ["rare-vector-tag"])
        names = dict(
            await db.fetch(
                "SELECT id, content FROM memories WHERE id = ANY($1)", [r["id"] for r in rows]
            )
        )
        return [names[r["id"]] for r in rows]

    before = await hnsw_scans(db)
    assert await tagged_nearest(bound) == exact_top(kept, query)
    assert await hnsw_scans(db) == before  # read exactly: the graph was not read
    # Below the tag's estimate the planner decides, and with sorting priced out it walks.
    await tagged_nearest(bound - 2)
    assert await hnsw_scans(db) > before


FILTERED_CALL = """
SELECT id FROM memory_vector_candidates(
    $1::vector, 10, NULL::tsquery, $2, jsonb_populate_record(NULL::memory_filter,
        jsonb_build_object('repo', $3::text, 'types', $4::text[], 'tags', $5::text[],
                           'trust', $6::text[], 'with_global', $7::boolean)))
"""


@pytest.mark.parametrize(
    ("repo", "types", "tags", "trust", "with_global"),
    [
        ("api", None, None, None, True),
        ("api", None, None, None, False),
        ("api", ["decision"], ["auth"], None, True),
        (None, None, ["auth"], ["user", "system"], False),
    ],
)
async def test_a_filtered_exact_read_keeps_every_filter(
    db: asyncpg.Connection,
    repo: str | None,
    types: list[str] | None,
    tags: list[str] | None,
    trust: list[str] | None,
    with_global: bool,
) -> None:
    rng = random.Random(11)
    rows = []  # (content, repo, type, tags, trust, archived, vector)
    for i in range(60):
        rows.append(
            (
                f"filtered {i}",
                rng.choice(["api", "web", None]),
                rng.choice(["decision", "learning"]),
                rng.choice([["auth"], ["auth", "db"], ["db"]]),
                rng.choice(["agent", "user", "system"]),
                i % 7 == 0,
                unit(rng),
            )
        )
    await db.executemany(
        "INSERT INTO memories (tenant_id, content, content_hash, source_repo, memory_type,"
        " tags, trust_level, archived_at, embedding)"
        " VALUES ($1, $2, memory_content_hash($2), $3, $4, $5, $6,"
        " CASE WHEN $7 THEN now() END, $8)",
        [(TENANT, *row) for row in rows],
    )
    await db.execute("ANALYZE memories")
    try:
        query = unit(random.Random(12))
        kept = {
            content: vector
            for content, row_repo, kind, row_tags, level, archived, vector in rows
            if not archived
            and (repo is None or row_repo == repo or (with_global and row_repo is None))
            and (types is None or kind in types)
            and (tags is None or set(tags) <= set(row_tags))
            and (trust is None or level in trust)
        }
        before = await hnsw_scans(db)
        async with db.transaction():
            exact = await factor_for_bound(db, 60)
            await db.execute(f"SET LOCAL app.vector_exact_factor = {exact}")
            found = await db.fetch(
                FILTERED_CALL, query, TENANT, repo, types, tags, trust, with_global
            )
        names = dict(
            await db.fetch(
                "SELECT id, content FROM memories WHERE id = ANY($1)", [r["id"] for r in found]
            )
        )
        assert [names[r["id"]] for r in found] == exact_top(kept, query)
        assert await hnsw_scans(db) == before  # read exactly: the graph was not read
    finally:
        await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


# Migration 0040: a scope's exact read ranks the entries of memories_scope_vectors_key
# alone, then reads the rows in that order until enough pass the whole filter.
SCOPED_CALL = """
SELECT id FROM memory_vector_candidates(
    $1::vector, $2, NULL::tsquery, $3, jsonb_populate_record(NULL::memory_filter,
        jsonb_build_object('repo', $4::text, 'include_held', $5::boolean,
                           'held_session', $6::uuid)))
"""
# The scans this session has not yet reported (this transaction's, and any before it not
# yet flushed), read before and after a call: no other session's.
SESSION_SCANS = """
SELECT pg_stat_get_xact_numscans('memories_scope_vectors_key'::regclass) AS ranked,
       pg_stat_get_xact_numscans('memories_pkey'::regclass) AS rows,
       pg_stat_get_xact_numscans('memories_embedding_hnsw'::regclass) AS graph
"""


async def scoped_ids(
    db: asyncpg.Connection,
    query: list[float],
    repo: str | None,
    max_rows: int = 10,
    include_held: bool | None = None,
    held_session: str | None = None,
) -> tuple[list[UUID], dict[str, int]]:
    """The candidates' ids, with every scope of these tests within the bound, and the
    index scans the call made: of the scope's vectors (ranked), of the rows by id (rows),
    of the graph."""
    exact = await factor_for_bound(db, 200)
    async with db.transaction():
        await db.execute(f"SET LOCAL app.vector_exact_factor = {exact}")
        # On a table this small the planner may read a few rows' pages instead of the
        # index (a bitmap of the tenant's rows); at a repository's size it does not.
        await db.execute("SET LOCAL enable_bitmapscan = off")
        await db.execute("SET LOCAL enable_seqscan = off")
        before = await db.fetchrow(SESSION_SCANS)
        rows = await db.fetch(
            SCOPED_CALL, query, max_rows, TENANT, repo, include_held, held_session
        )
        after = await db.fetchrow(SESSION_SCANS)
    return [r["id"] for r in rows], {name: n - before[name] for name, n in dict(after).items()}


async def scoped_nearest(
    db: asyncpg.Connection, query: list[float], repo: str | None, **options: Any
) -> tuple[list[str], dict[str, int]]:
    ids, scans = await scoped_ids(db, query, repo, **options)
    names = dict(await db.fetch("SELECT id, content FROM memories WHERE id = ANY($1)", ids))
    return [names[i] for i in ids], scans


async def test_a_repository_is_ranked_from_its_vectors_index_and_few_rows_are_read(
    db: asyncpg.Connection,
) -> None:
    try:
        repo_rows = await insert_units(db, TENANT, "api", "api memory", seed=21)
        global_rows = await insert_units(db, TENANT, None, "global memory", seed=22)
        await insert_units(db, TENANT, "web", "web memory", seed=23)
        query = unit(random.Random(24))
        found, scans = await scoped_nearest(db, query, "api", max_rows=5)
        assert found == exact_top({**repo_rows, **global_rows}, query)[:5]
        # Two ranges of the index (the repository's, the global ones), and the rows of the
        # five that pass, read one by one: not the 80 in the scope; the graph not at all.
        assert scans == {"ranked": 2, "rows": 5, "graph": 0}
    finally:
        await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


async def test_what_only_the_row_holds_is_checked_on_the_row(db: asyncpg.Connection) -> None:
    """Quarantined and held memories have entries in the index like any live memory; the
    row read after the ranking leaves them out, but for the held ones of the asking
    session."""
    try:
        rows = await insert_units(db, TENANT, "api", "api memory", seed=31)
        query = unit(random.Random(32))
        first, second, third, *_ = exact_top(rows, query)
        session = "00000000-0000-0000-0000-000000000031"
        await db.execute(
            "UPDATE memories SET quarantined_at = now() WHERE tenant_id = $1 AND content = $2",
            TENANT,
            first,
        )
        await db.execute(
            "UPDATE memories SET held_at = now(), provenance = jsonb_build_object("
            "'session_id', $3::text) WHERE tenant_id = $1 AND content = $2",
            TENANT,
            second,
            session,
        )
        await db.execute("VACUUM memories")  # the entries are read without their rows
        kept = {c: v for c, v in rows.items() if c != first}
        unheld = {c: v for c, v in kept.items() if c != second}
        for options, expected in (
            ({}, kept),
            ({"include_held": False}, unheld),
            ({"include_held": False, "held_session": session}, kept),
        ):
            found, scans = await scoped_nearest(db, query, "api", **options)
            assert found == exact_top(expected, query)
            assert third in found
            # Ranked from the index (the repository's range at least: the global range,
            # empty here, the planner reads as it likes).
            assert scans["ranked"] >= 1 and scans["graph"] == 0
    finally:
        await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


async def test_a_scope_whose_names_do_not_fit_an_entry_is_read_from_its_rows(
    db: asyncpg.Connection,
) -> None:
    # 300 four-byte characters: with a 384-dimension vector, past an entry's room.
    repo = "\U0001d11e" * 300
    try:
        rows = await insert_units(db, TENANT, repo, "long name memory", seed=41)
        held = await db.fetchval(
            "SELECT count(*) FROM memories"
            " WHERE tenant_id = $1 AND memory_vector_indexable(tenant_id, source_repo, embedding)",
            TENANT,
        )
        assert held == 0
        query = unit(random.Random(42))
        found, scans = await scoped_nearest(db, query, repo)
        assert found == exact_top(rows, query)
        assert scans["ranked"] == 0 and scans["graph"] == 0  # read exactly, from the rows
        # The tenant's search in no repository reads its rows too: its repositories' names
        # are not all known to fit.
        others = await insert_units(db, TENANT, "api", "api memory", seed=43)
        found, scans = await scoped_nearest(db, query, None)
        assert found == exact_top({**rows, **others}, query)
        assert scans["ranked"] == 0 and scans["graph"] == 0
    finally:
        await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


# This session's reads of the table's pages not yet reported (as SESSION_SCANS: read before
# and after), hit in shared buffers or not.
HEAP_BLOCKS = "SELECT pg_stat_get_xact_blocks_fetched('memories'::regclass)"


async def test_a_repository_is_counted_and_ranked_without_reading_its_rows(
    db: asyncpg.Connection,
) -> None:
    """The count that sizes a repository and the ranking of its entries read indexes alone;
    the rows read are those of the candidates. Until migration 0040 the planner, given the
    repository twice (the range, and the filter's OR of the repository and its globals),
    took a large repository for a few rows and read both through a bitmap of its pages."""
    rng = random.Random(51)
    repos = ["api"] * 400 + [None] * 100 + [f"repo-{i % 40}" for i in range(4000)]
    try:
        await db.executemany(
            "INSERT INTO memories (tenant_id, source_repo, content, content_hash, embedding)"
            " VALUES ($1, $2, $3, memory_content_hash($3), $4)",
            [(TENANT, repo, f"sized {i}", unit(rng)) for i, repo in enumerate(repos)],
        )
        await db.execute("VACUUM ANALYZE memories")  # every page visible: index-only reads
        query = unit(random.Random(52))
        # Counted (the table is over the bound), then read exactly (the scope is within it).
        exact = await factor_for_bound(db, 1000)
        async with db.transaction():
            await db.execute(f"SET LOCAL app.vector_exact_factor = {exact}")
            before = await db.fetchval(HEAP_BLOCKS)
            rows = await db.fetch(SCOPED_CALL, query, 20, TENANT, "api", None, None)
            read = await db.fetchval(HEAP_BLOCKS) - before
        assert len(rows) == 20
        # The 20 candidates' rows, each a lookup of its page: not the scope's 500 rows.
        assert read <= 2 * 20, read
    finally:
        await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)
        # The table as the tests after this one expect it (their plans are a small
        # table's): without 4,500 deleted rows, and its statistics without them.
        await db.execute("VACUUM ANALYZE memories")


async def test_a_repositorys_read_keeps_one_plan_for_every_filter(db: asyncpg.Connection) -> None:
    """On one PostgreSQL a repository's count and exact read are static statements, whose
    plan a connection keeps (migration 0053). One plan, made for any values, serves every
    filter in turn: each finds the exact nearest of its scope, ranks the index's entries
    without reading the scope's rows, and never walks the graph. So it does where the
    tenants are many and small, and the plan is made for a tenant of two rows."""
    rng = random.Random(61)
    rows = []  # (content, repo, type, trust, vector)
    for i in range(4500):
        repo = "api" if i < 400 else None if i < 500 else f"repo-{i % 40}"
        kind, level = rng.choice(["decision", "learning"]), rng.choice(["agent", "user"])
        rows.append((f"kept plan {i}", repo, kind, level, unit(rng)))
    try:
        await db.executemany(
            "INSERT INTO memories (tenant_id, content, content_hash, source_repo, memory_type,"
            " trust_level, embedding) VALUES ($1, $2, memory_content_hash($2), $3, $4, $5, $6)",
            [(TENANT, *row) for row in rows],
        )
        await db.execute("VACUUM ANALYZE memories")  # every page visible: index-only reads
        await each_filter_read_by_one_plan(db, rows)
        # 3,000 tenants of two rows (one in a repository): the average tenant, which a
        # plan made for any tenant is made for, is two rows.
        await db.execute(
            "INSERT INTO memories (tenant_id, content, content_hash, source_repo)"
            " SELECT $1 || (g / 2), 'small ' || g, memory_content_hash('small ' || g),"
            " CASE WHEN g % 2 = 0 THEN 'api' END FROM generate_series(0, 5999) g",
            SMALL_TENANTS,
        )
        await db.execute("VACUUM ANALYZE memories")  # and the kept plans are made again
        await each_filter_read_by_one_plan(db, rows)
    finally:
        await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)
        await db.execute("DELETE FROM memories WHERE tenant_id LIKE $1 || '%'", SMALL_TENANTS)
        await db.execute("VACUUM ANALYZE memories")  # as test_a_repository_is_counted_...


SMALL_TENANTS = "vector-scope-small-"


async def each_filter_read_by_one_plan(
    db: asyncpg.Connection, rows: list[tuple[str, str | None, str, str, list[float]]]
) -> None:
    """Filters in turn on this connection, as the service's searches and stores run (one
    generic plan): each the exact nearest of its scope, its rows read one by one, the
    graph not at all."""
    exact = await factor_for_bound(db, 1000)  # the table over the bound, each scope within
    before = await hnsw_scans(db)
    # The statements each call ran, as auto_explain names them: the static count and read
    # (their text as the function writes them), not the EXECUTEd ones planned per call.
    ran: list[str] = []
    await db.execute(
        "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;"
        " SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;"
        " SET client_min_messages = notice"
    )

    def listen(_: object, message: Any) -> None:
        ran.append(message.message)

    db.add_log_listener(listen)
    for n, (types, trust, with_global) in enumerate(
        [
            (None, None, True),
            (["decision"], None, True),
            (None, ["user"], False),
            (["learning"], ["agent"], True),
            (None, None, False),
            (None, None, True),
        ]
    ):
        query = unit(random.Random(70 + n))
        kept = {
            content: vector
            for content, repo, kind, level, vector in rows
            if (repo == "api" or (with_global and repo is None))
            and (types is None or kind in types)
            and (trust is None or level in trust)
        }
        async with db.transaction():
            await db.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            await db.execute(f"SET LOCAL app.vector_exact_factor = {exact}")
            read_before = await db.fetchval(HEAP_BLOCKS)
            found = await db.fetch(
                FILTERED_CALL, query, TENANT, "api", types, None, trust, with_global
            )
            read = await db.fetchval(HEAP_BLOCKS) - read_before
        names = dict(
            await db.fetch(
                "SELECT id, content FROM memories WHERE id = ANY($1)", [r["id"] for r in found]
            )
        )
        assert [names[r["id"]] for r in found] == exact_top(kept, query), (types, trust)
        # The ten candidates' rows, each a lookup of its page: not the scope's rows.
        assert read <= 2 * 10, (types, trust, read)
        assert any(STATIC_COUNT in text for text in ran), (types, trust)
        assert any(STATIC_READ in text for text in ran), (types, trust)
        ran.clear()
    db.remove_log_listener(listen)
    await db.execute("SET auto_explain.log_min_duration = -1; RESET client_min_messages")
    assert await hnsw_scans(db) == before


# The static statements' own words (migrations/sql/memory_nearest/0053.sql): the count's
# bound and the read's ranking name the function's variables, where the EXECUTEd ones
# name their parameter, ($1).
STATIC_COUNT = "LIMIT search.exact_bound + 1) repo_rows"
STATIC_READ = "AND public.memory_entry_matches(m, filters)"
