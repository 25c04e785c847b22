"""The schema and the service on a Citus cluster (a coordinator and two workers on
loopback): the migrations distribute the tenant tables by tenant_id and take it back, a
tenant's statements run as one task on one worker, and a tenant moved to its own shard
under traffic loses nothing.

Runs with --citus (see conftest.py), as ./scripts/test does when the Citus source is at
../shared/vendor/; skipped otherwise."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from asyncpg.connection import LoggedQuery
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.db.migrations import downgrade, upgrade_head
from app.db.pool import prepare_session, search_settings
from app.db.unit_of_work import Database, set_local, unit_of_work
from app.domain.errors import ConflictError
from app.domain.filters import MemoryFilter
from app.domain.memory import NewMemory
from app.embeddings.hashing import HashEmbedder
from app.repository.memories import MemoryRepository
from app.repository.search import SearchRepository
from app.repository.search_statement import SearchParams, search_statement
from app.repository.sessions import SessionRepository
from app.repository.sql import sql_literal
from app.services.reembed import Reembedder
from tests.cli.test_cli import run as run_cli
from tests.cli.test_cli import runs_in_psql

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

DEFAULT_EXACT_FACTOR = Settings.model_fields["vector_exact_factor"].default

DISTRIBUTED = {
    "api_keys": "n",  # a reference table: on every node
    "audit_log": "h",
    "idempotency_keys": "h",
    "memories": "h",
    "memory_access": "h",
    "sessions": "h",
}


async def distribution(url: str) -> dict[str, str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT logicalrelid::text AS name, partmethod::text FROM pg_dist_partition"
        )
        colocated = await conn.fetchval(
            "SELECT count(DISTINCT colocationid) FROM pg_dist_partition WHERE partmethod = 'h'"
        )
    finally:
        await conn.close()
    assert colocated in (0, 1)  # every tenant table on the same shards
    return {r["name"]: r["partmethod"] for r in rows}


async def test_migrations_distribute_by_tenant_and_take_it_back(citus_url: str) -> None:
    await asyncio.to_thread(upgrade_head, citus_url)
    assert await distribution(citus_url) == DISTRIBUTED
    await asyncio.to_thread(downgrade, citus_url, "0016")
    assert await distribution(citus_url) == {}
    await asyncio.to_thread(upgrade_head, citus_url)
    assert await distribution(citus_url) == DISTRIBUTED


def task_count(plan: list[asyncpg.Record]) -> int:
    text = "\n".join(r[0] for r in plan)
    return next(int(line.split(":")[1]) for line in text.splitlines() if "Task Count" in line)


def with_constants(sql: str, args: Sequence[Any]) -> str:
    # One pass: a value written in (a statement among them) is not read again.
    return re.sub(r"\$(\d+)", lambda n: sql_literal(args[int(n.group(1)) - 1]), sql)


async def test_the_hot_statements_run_as_one_task_on_one_worker(citus_url: str) -> None:
    """Store, get, list, search (plain, filtered, keyword-only, each with its count of what
    it returned) and the session snapshot, as the repositories send them: each EXPLAINs as
    one task, and Citus counts each as a single-shard execution. (EXPLAIN is given the
    values as constants: Citus's remote EXPLAIN of bound parameters fails on the worker,
    "could not determine data type".)"""
    statements: list[tuple[str, tuple[Any, ...]]] = []

    def record(query: LoggedQuery) -> None:
        if any(read in query.query for read in ("FROM memories", "INTO memories", "postings(")):
            statements.append((query.query, tuple(query.args)))  # not BEGIN, SET, types

    async def init(conn: asyncpg.Connection) -> None:
        await prepare_session(conn, ef_search=100)
        conn.add_query_logger(record)

    pool = await asyncpg.create_pool(citus_url, min_size=1, max_size=1, init=init)
    database = Database(pool, transaction_settings=search_settings(100))
    database.distributed = True
    vector = [0.05] * 384
    await reset_counters(citus_url)
    try:
        async with unit_of_work(database, "t2") as uow:
            memories = MemoryRepository(uow)
            (stored,) = await memories.upsert_many(
                [(NewMemory("routed by tenant", source_repo="acme/api"), vector)], ["agent"]
            )
            assert stored is not None
            await memories.get(stored.memory.id)
            await memories.list(MemoryFilter(), 50, None)
            search = SearchRepository(uow)
            for scope, alpha in (
                (MemoryFilter(), 0.6),
                (MemoryFilter("acme/api"), 0.6),
                (MemoryFilter(), 0.0),
            ):
                params = SearchParams("routed tenant", vector, alpha, 10, 50, 200, 0.3, 30, True)
                outcome = await search.search(scope, params)
                assert [hit.memory.id for hit in outcome.hits] == [stored.memory.id]
            await SessionRepository(uow).snapshot_rows(None, 7, 5)
        counters = await read_counters(citus_url)
        await asyncio.sleep(0)  # query loggers are called soon, not at once
        conn = await asyncpg.connect(citus_url)
        try:
            plans = [
                task_count(await conn.fetch("EXPLAIN " + with_constants(sql, args)))
                for sql, args in statements
            ]
            unscoped = task_count(await conn.fetch("EXPLAIN SELECT count(*) FROM memories"))
        finally:
            await conn.close()
    finally:
        await pool.close()
        await reset_tables(citus_url)
    # One per call above; before each search its keyword hits (a call Citus delegates to
    # the tenant's worker), and after it the count of what it returned.
    assert len(statements) == 13
    assert plans == [1] * 13
    # The store runs its write, then the select of the written row with its access counts
    # (Citus takes no subquery in RETURNING): two executions, both on the tenant's shard.
    assert counters == {"single": 14, "multi": 0}
    assert unscoped > 1  # the contrast: without the tenant, every shard


async def test_a_small_scope_is_read_exactly_and_a_large_one_through_the_graph(
    citus_url: str,
) -> None:
    """The written-out vector side chooses as memory_vector_candidates() does on one node:
    a scope of at most sqrt(app.vector_exact_factor x the shard's live rows) is read whole
    and sorted by exact distance, a larger one walks the HNSW graph. Here 1,000 rows (the
    bound about 707): all of them take the graph, a repository of 50 the exact read. Seen
    in the worker's plan, which branch ran."""
    rng = random.Random(7)
    conn = await asyncpg.connect(citus_url)
    await register_vector(conn)
    try:
        await conn.executemany(
            "INSERT INTO memories (tenant_id, content, content_hash, source_repo, embedding)"
            " VALUES ('t-exact', $1, memory_content_hash($1), $2, $3)",
            [
                (
                    f"memory {i}",
                    "small" if i < 50 else "large",
                    [rng.gauss(0, 1) for _ in range(384)],
                )
                for i in range(1000)
            ],
        )
        await conn.execute("ANALYZE memories")  # the workers' live-row counts, at once
        await conn.execute("SET citus.propagate_set_commands = 'local'")
        ran = {}
        for repo in (None, "small"):
            params = SearchParams("memory", [0.05] * 384, 1.0, 10, 100, 200, 0.3, 30, False)
            sql, args = search_statement("t-exact", MemoryFilter(repo), params, True).compiled()
            async with conn.transaction():
                settings = search_settings(100, DEFAULT_EXACT_FACTOR)
                await set_local(conn, {"app.tenant_id": "t-exact", **settings})
                plan = [
                    r[0]
                    for r in await conn.fetch(
                        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
                        + with_constants(sql, args)
                    )
                ]
            # By distance: exactly ("+ 0", a sort), or through the graph (the HNSW index,
            # or a sort where the worker prices one lower on so few rows).
            executed = [
                line
                for n, line in enumerate(plan)
                if ("Sort Key" in line and "embedding <=>" in line and "(actual" in plan[n - 1])
                or ("memories_embedding_hnsw" in line and "(actual" in line)
            ]
            exact = any("+ '0'::double precision" in line for line in executed)
            graph = any("+ '0'::double precision" not in line for line in executed)
            ran[repo] = (exact, graph)
    finally:
        await conn.close()
        await reset_tables(citus_url)
    assert ran == {None: (False, True), "small": (True, False)}


async def test_a_tenants_requests_never_fan_out(citus_url: str, api: httpx.AsyncClient) -> None:
    """Citus's own counters over a tenant's working day through the API: every distributed
    statement ran on a single shard."""
    await reset_counters(citus_url)
    decision = {
        "content": "Use pgbouncer in transaction mode",
        "memory_type": "decision",
        "source_repo": "acme/api",
    }
    first = (await api.post("/memories", json=decision)).json()
    notes = [
        {"content": f"note {i} on connection pooling", "source_repo": "acme/api"} for i in range(5)
    ]
    await api.post("/memories/batch", json={"memories": notes})
    assert (await api.post("/memories", json=decision)).json()["status"] == "reinforced"
    searches: list[dict[str, str | int]] = [
        {"q": "connection pooling"},
        {"q": "pgbouncer", "source_repo": "acme/api"},
        {"q": "pooling", "alpha": 0},
        {"q": "pooling", "alpha": 1},
    ]
    for params in searches:
        assert (await api.get("/search", params=params)).status_code == 200
    memory_id = first["memory"]["id"]
    for call in (
        api.get(f"/memories/{memory_id}"),
        api.get("/memories", params={"source_repo": "acme/api"}),
        api.patch(f"/memories/{memory_id}", json={"tags": ["db"]}),
        api.post(f"/memories/{memory_id}/feedback", json={"outcome": "helpful"}),
        api.post(
            f"/memories/{memory_id}/supersede",
            json={"content": "Use pgbouncer, session mode", "source_repo": None},
        ),
        api.post(f"/memories/{memory_id}/restore"),
        api.post(
            "/remember", json={"text": "The pool needs a reset hook", "source_repo": "acme/api"}
        ),
        api.get("/strategies/hint", params={"task": "pooling", "source_repo": "acme/api"}),
        api.post("/prune", json={"dry_run": False}),
        api.get("/stats"),
        api.get("/snapshot", params={"source_repo": "acme/api"}),
    ):
        response = await call
        assert response.status_code < 300, response.text
    session = (await api.post("/sessions", json={"source_repo": "acme/api"})).json()
    ended = await api.post(
        f"/sessions/{session['session_id']}/end", json={"status": "completed", "summary": "pooled"}
    )
    assert ended.status_code == 200, ended.text
    counters = await read_counters(citus_url)
    assert counters["multi"] == 0
    assert counters["single"] >= 20


async def as_owner(url: str, sql: str) -> asyncpg.Record | None:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchrow(sql)
    finally:
        await conn.close()


async def reset_tables(url: str) -> None:
    await as_owner(url, "TRUNCATE memories, memory_access, sessions, idempotency_keys")


async def reset_counters(url: str) -> None:
    await as_owner(url, "SELECT citus_stat_counters_reset()")


async def read_counters(url: str) -> dict[str, int]:
    """Statements run on one shard and on several, in this database since the reset."""
    row = await as_owner(
        url,
        "SELECT query_execution_single_shard AS single, query_execution_multi_shard AS multi"
        " FROM citus_stat_counters WHERE name = current_database()",
    )
    assert row is not None
    return {"single": row["single"], "multi": row["multi"]}


async def test_a_tenant_moved_to_its_own_shard_under_traffic_loses_nothing(
    citus_url: str, api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """isolate_tenant_to_new_shard while the tenant stores and searches: every stored memory
    is there afterwards, and the tenant's rows of every table sit on a shard of its own."""
    shard_of = "SELECT get_shard_id_for_distribution_column($1, 'default')"
    before = await db.fetchval(shard_of, "memories")
    stored: list[str] = []
    isolating = asyncio.Event()
    done = asyncio.Event()

    retried: list[int] = []

    async def call(method: str, path: str, **kw: Any) -> httpx.Response:
        """As a client does: a 503 with Retry-After is tried again (without the wait)."""
        while (response := await api.request(method, path, **kw)).status_code == 503:
            assert "retry-after" in response.headers
            retried.append(1)
        return response

    async def writer(n: int) -> None:
        i = 0
        while not done.is_set() or i < 5:
            response = await call(
                "POST", "/memories", json={"content": f"writer {n} memory {i}", "source_repo": None}
            )
            assert response.status_code == 201, response.text
            stored.append(response.json()["memory"]["id"])
            i += 1
            if i == 5:
                isolating.set()

    async def searcher() -> None:
        while not done.is_set():
            response = await call("GET", "/search", params={"q": "writer memory"})
            assert response.status_code == 200, response.text

    async def isolate() -> None:
        await isolating.wait()
        try:
            await db.execute(
                "SELECT isolate_tenant_to_new_shard('memories', 'default', 'CASCADE',"
                " shard_transfer_mode => 'block_writes')"
            )
        finally:
            done.set()

    await asyncio.gather(writer(1), writer(2), searcher(), isolate())
    after = {
        table: await db.fetchval(shard_of, table)
        for table in ("memories", "sessions", "idempotency_keys")
    }
    assert after["memories"] != before
    ranges = await db.fetch(
        "SELECT shardminvalue, shardmaxvalue FROM pg_dist_shard WHERE shardid = ANY($1)",
        list(after.values()),
    )
    assert all(r["shardminvalue"] == r["shardmaxvalue"] for r in ranges)  # one hash value
    rows = await db.fetch("SELECT id::text FROM memories WHERE tenant_id = 'default'")
    assert sorted(r["id"] for r in rows) == sorted(stored)
    assert len(stored) >= 10


async def test_a_re_embed_is_refused_with_its_reason_and_changes_nothing(
    citus_url: str, database_url: str
) -> None:
    """On Citus a re-embed's first step waits forever on its own locks (docs/operations.md):
    it is refused before it starts, and the table keeps its one vector column."""
    conn = await asyncpg.connect(database_url)
    try:
        with pytest.raises(ConflictError, match="not on Citus"):
            await Reembedder(conn, HashEmbedder(384)).start()
        columns = await conn.fetch(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'memories' AND column_name LIKE 'embedding%'"
        )
    finally:
        await conn.close()
    assert [c["column_name"] for c in columns] == ["embedding"]


async def test_explain_search_prints_what_psql_runs_and_the_workers_plan(
    citus_url: str, database_url: str, tmp_path: Path
) -> None:
    """On Citus, explain-search prints the search statement with the keyword hits it was
    given, ready for psql, and the worker's plan of it (one task, executed)."""
    code, out, err = await run_cli("explain-search", "routed tenant", DATABASE_URL=database_url)
    assert code == 0, err
    assert "\\set postings '" in out and "WITH query_terms AS" in out
    assert "Task Count: 1" in out and "Execution Time" in out
    await runs_in_psql(out, database_url, tmp_path)
