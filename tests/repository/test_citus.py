"""The schema and the service on a Citus cluster (a coordinator and two workers on
loopback): the migrations distribute the tenant tables by tenant_id and take it back, a
tenant's statements run as one task on one worker, and a tenant moved to its own shard
under traffic loses nothing.

Runs with --citus (see conftest.py), as ./scripts/test does when the Citus source is at
../shared/vendor/; skipped otherwise."""

from __future__ import annotations

import asyncio
import math
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
from app.domain.errors import ConflictError, ServiceUnavailableError
from app.domain.filters import MemoryFilter
from app.domain.memory import NewMemory
from app.embeddings.base import Embedder
from app.embeddings.hashing import HashEmbedder
from app.main import create_app
from app.repository.memories import MemoryRepository
from app.repository.placement import PlacementRepository
from app.repository.search import SearchRepository
from app.repository.search_statement import SearchParams, search_statement
from app.repository.sessions import SessionRepository
from app.repository.sql import named, sql_literal
from app.services.reembed import Reembedder
from tests.conftest import EMPTY_TABLES, running
from tests.helpers.citus import as_owner, reset_tables
from tests.helpers.cli import run as run_cli
from tests.helpers.cli import runs_in_psql

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

DEFAULT_EXACT_FACTOR = Settings.model_fields["vector_exact_factor"].default

# "n": a reference table, on every node (looked up before the tenant is known).
DISTRIBUTED = {
    "api_keys": "n",
    "people": "n",
    "oauth_clients": "n",
    "oauth_requests": "n",
    "oauth_grants": "n",
    "oauth_codes": "n",
    "oauth_tokens": "n",
    "console_sessions": "n",
    "audit_log": "h",
    "drafts": "h",
    "idempotency_keys": "h",
    "memories": "h",
    "memory_access": "h",
    "proposals": "h",
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
    """Store, get, list, search (plain, filtered, keyword-only) and the session snapshot, as
    the repositories send them: each EXPLAINs as one task, and Citus counts each as a
    single-shard execution. (EXPLAIN is given the values as constants: Citus's remote
    EXPLAIN of bound parameters fails on the worker, "could not determine data type".)"""
    statements: list[tuple[str, tuple[Any, ...]]] = []

    def record(query: LoggedQuery) -> None:
        if any(
            read in query.query for read in ("FROM memories", "INTO memories", "search_on_worker(")
        ):
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
                [(NewMemory("routed by tenant", source_repo="acme/api"), vector, None)], ["agent"]
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
    # One per call above; a search is one call Citus delegates to the tenant's worker, where
    # its statement reads the keyword hits and counts what it returned too.
    assert len(statements) == 7
    assert plans == [1] * 7
    # The store runs its write, then the select of the written row with its access counts
    # (Citus takes no subquery in RETURNING): two executions, both on the tenant's shard.
    assert counters == {"single": 8, "multi": 0}
    assert unscoped > 1  # the contrast: without the tenant, every shard


async def the_tenants_worker(url: str, tenant: str) -> tuple[str, dict[str, str]]:
    """The URL of the worker holding the tenant's shards, and each table's shard there."""
    conn = await asyncpg.connect(url)
    try:
        row = await conn.fetchrow(
            "SELECT s.nodeport,"
            " shard_name('memories', get_shard_id_for_distribution_column('memories', $1::text))"
            "     AS memories,"
            " shard_name('memory_access',"
            "     get_shard_id_for_distribution_column('memory_access', $1::text)) AS memory_access"
            " FROM citus_shards s"
            " WHERE s.shardid = get_shard_id_for_distribution_column('memories', $1::text)",
            tenant,
        )
    finally:
        await conn.close()
    port = url.split("@")[1].split("/")[0].split(":")[1]
    worker = url.replace(f":{port}/", f":{row['nodeport']}/")
    return worker, {"memories": row["memories"], "memory_access": row["memory_access"]}


async def test_a_small_scope_is_read_exactly_and_a_large_one_through_the_graph(
    citus_url: str,
) -> None:
    """On the tenant's worker the vector side chooses as on one node, in the same function
    (memory_vector_candidates(), reading the tenant's shard): a scope of at most
    sqrt(app.vector_exact_factor x the shard's rows) is read whole and sorted by exact
    distance, a larger one walks the HNSW graph. Here 1,000 rows (the bound about 707): all
    of them take the graph, a repository of 50 the exact read, its true nearest first.
    Seen in the worker's count of scans of the shard's HNSW index."""
    rng = random.Random(7)
    vectors = [[rng.gauss(0, 1) for _ in range(384)] for _ in range(1000)]
    query = [rng.gauss(0, 1) for _ in range(384)]
    conn = await asyncpg.connect(citus_url)
    await register_vector(conn)
    try:
        await conn.executemany(
            "INSERT INTO memories (tenant_id, content, content_hash, source_repo, embedding)"
            " VALUES ('t-exact', $1, memory_content_hash($1), $2, $3)",
            [(f"memory {i}", "small" if i < 50 else "large", v) for i, v in enumerate(vectors)],
        )
        await conn.execute("ANALYZE memories")  # the shards' row counts
    finally:
        await conn.close()
    worker_url, shards = await the_tenants_worker(citus_url, "t-exact")
    worker = await asyncpg.connect(worker_url)
    await register_vector(worker)
    call = """
SELECT m.content FROM memory_vector_candidates(
    $1::vector, 10, NULL::tsquery, 't-exact',
    jsonb_populate_record(NULL::memory_filter, jsonb_build_object('repo', $2::text))) v
JOIN {memories} m ON m.id = v.id
ORDER BY v.vector_similarity DESC
""".format(**shards)
    scans = (
        "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes"
        " WHERE relname = $1 AND indexrelname LIKE 'memories_embedding_hnsw%'"
    )
    found, walked = {}, {}
    try:
        await prepare_session(worker, ef_search=100)
        # The shard's statistics, as the search's own call sees them there (Citus hides
        # shards from the catalog of a client's session, not of its own).
        await worker.execute("SET citus.show_shards_for_app_name_prefixes = '*'")
        for repo in (None, "small"):
            before = await worker.fetchval(scans, shards["memories"])
            async with worker.transaction():
                settings = search_settings(100, DEFAULT_EXACT_FACTOR)
                await set_local(worker, {"app.tenant_id": "t-exact", **settings})
                # On a table this small the planner would sort rather than read the graph;
                # with sorting priced out it reads the graph wherever the query's form lets it.
                await worker.execute("SET LOCAL enable_sort = off")
                found[repo] = [r["content"] for r in await worker.fetch(call, query, repo)]
            await worker.execute("SELECT pg_stat_force_next_flush()")
            await worker.execute("SELECT pg_stat_clear_snapshot()")
            walked[repo] = await worker.fetchval(scans, shards["memories"]) > before
    finally:
        await worker.close()
        await reset_tables(citus_url)
    assert walked == {None: True, "small": False}

    def similarity(i: int) -> float:  # by cosine: |query| is the same for every row
        v = vectors[i]
        return sum(a * b for a, b in zip(v, query, strict=True)) / math.sqrt(sum(a * a for a in v))

    assert found["small"] == [f"memory {i}" for i in sorted(range(50), key=similarity)[::-1][:10]]


async def test_a_search_is_planned_once_on_the_tenants_worker(citus_url: str) -> None:
    """The search statement goes to the tenant's worker by a delegated call, and is prepared
    there once per connection against the tenant's shards: the same search three times is
    one prepared statement, planned once (a generic plan, executed three times), whose text
    names the shards and no distributed table. A connection keeps at most 32 of them."""
    pool = await asyncpg.create_pool(
        citus_url, min_size=1, max_size=1, init=lambda c: prepare_session(c, ef_search=100)
    )
    database = Database(pool, transaction_settings=search_settings(100))
    database.distributed = True
    vector = [0.05] * 384
    probe = (
        "SELECT jsonb_agg(jsonb_build_object('statement', statement, 'generic', generic_plans,"
        " 'custom', custom_plans)) FROM pg_prepared_statements"
        " WHERE name LIKE 'memory\\_search\\_%' AND statement NOT LIKE '%pg_prepared%'"
    )
    call = "SELECT memory_search_on_worker('t-once', $1, $2, false)"
    try:
        async with unit_of_work(database, "t-once") as uow:
            await MemoryRepository(uow).upsert_many(
                [(NewMemory("planned once on the worker"), vector, None)], ["agent"]
            )
            params = SearchParams("planned worker", vector, 0.6, 10, 50, 200, 0.3, 30, True)
            for _ in range(3):
                outcome = await SearchRepository(uow).search(MemoryFilter(), params)
                assert len(outcome.hits) == 1
            conn = await uow.connection()
            (prepared,) = await conn.fetchval(call, probe, [])
            for n in range(40):
                await conn.fetchval(call, f"SELECT to_jsonb({n} + $1::int)", ["1"])
            kept = await conn.fetchval(
                call, "SELECT to_jsonb(count(*)) FROM pg_prepared_statements", []
            )
    finally:
        await pool.close()
        await reset_tables(citus_url)
    assert (prepared["generic"], prepared["custom"]) == (3, 0)
    text = re.sub(r"--[^\n]*", "", prepared["statement"])  # the SQL, not its comments
    assert re.search(r"\bmemories_\d+\b", text) and re.search(r"\bmemory_access_\d+\b", text)
    assert not re.search(r"\b(memories|memory_access)\b(?!_\d)", text)
    assert kept == 32


async def test_a_search_on_the_worker_serves_only_the_transactions_tenant(
    citus_url: str,
) -> None:
    """memory_search_on_worker() runs a statement on the shard of the tenant it names: it
    refuses any tenant but the transaction's own, and on the shard row-level security still
    hides the other tenants there (two tenants of one shard here)."""
    owner = await asyncpg.connect(citus_url)
    try:
        neighbour = await owner.fetchval(
            "SELECT 't-next-' || n FROM generate_series(1, 1000) n"
            " WHERE get_shard_id_for_distribution_column('memories', 't-next-' || n)"
            "     = get_shard_id_for_distribution_column('memories', 't-home'::text)"
            " LIMIT 1"
        )
        await owner.executemany(
            "INSERT INTO memories (tenant_id, content, content_hash)"
            " VALUES ($1, $2, memory_content_hash($2))",
            [(tenant, f"{tenant}'s memory") for tenant in ("t-home", neighbour)],
        )
    finally:
        await owner.close()
    conn = await asyncpg.connect(citus_url)
    call = "SELECT memory_search_on_worker($1, $2, $3, false)"
    everyone = "SELECT jsonb_agg(DISTINCT m.tenant_id) FROM {memories} m"
    named = "SELECT jsonb_agg(m.content) FROM {memories} m WHERE m.tenant_id = $1"
    try:
        await prepare_session(conn, ef_search=40)
        async with conn.transaction():
            await set_local(conn, {"app.tenant_id": "t-home"})
            assert await conn.fetchval(call, "t-home", everyone, []) == ["t-home"]
            assert await conn.fetchval(call, "t-home", named, [neighbour]) is None
        async with conn.transaction():
            await set_local(conn, {"app.tenant_id": "t-home"})
            with pytest.raises(asyncpg.InsufficientPrivilegeError, match="own tenant"):
                await conn.fetchval(call, neighbour, everyone, [])
    finally:
        await conn.close()
        await reset_tables(citus_url)


async def a_working_day(api: httpx.AsyncClient) -> None:
    """A tenant's day through the API: stores, searches of each side, reads, edits, a
    supersede and a restore, /remember, a hint, a prune, /stats, a snapshot, a session."""
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


async def test_a_tenants_requests_never_fan_out(citus_url: str, api: httpx.AsyncClient) -> None:
    """Citus's own counters over a tenant's working day through the API: every distributed
    statement ran on a single shard."""
    await reset_counters(citus_url)
    await a_working_day(api)
    counters = await read_counters(citus_url)
    assert counters["multi"] == 0
    assert counters["single"] >= 20


# What the coordinator says (at DEBUG1) on the path where both crashes were: a relation of
# an outer join wrapped into a subplan of its own, and the statement left after its
# subplans were taken out still joining outward (docs/scale-out.md, "Two crashes").
WRAPPED = re.compile(r"^(Wrapping relation|recursively planning \w+ side of the \w+ join)")
REPLANNED = re.compile(r"^Plan \d+ query after replacing subqueries and CTEs: (?P<rest>.*)", re.S)
OUTER_JOIN = re.compile(r"\b(LEFT|RIGHT|FULL)( OUTER)? JOIN\b")


# The listener is on each pooled connection while it is lent out (asyncpg warns of it at
# release, then drops it).
@pytest.mark.filterwarnings("ignore:.*active log listener:asyncpg.InterfaceWarning")
async def test_a_tenants_working_day_never_takes_the_path_that_crashed_the_coordinator(
    citus_url: str,
    settings: Settings,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both coordinator crashes are one fault: a statement the router planner gives up on
    (for a modifying CTE, or a catalog read) is planned recursively; a table under
    row-level security on the inner side of an outer join is wrapped into a subplan; and
    planning what is left fails (flatten_join_alias_vars). Over a tenant's day through the
    API the coordinator, asked for its DEBUG1 notes on every connection the service is
    lent, wraps no relation, and what it plans again after taking subplans out (a store's
    write, /stats' counts) has no outer join left in it."""
    notes: list[str] = []

    async def listening(conn: asyncpg.Connection) -> None:
        conn.add_log_listener(lambda _conn, message: notes.append(message.message))
        await conn.execute("SET client_min_messages = debug1")

    create_pool = asyncpg.create_pool
    monkeypatch.setattr(
        asyncpg, "create_pool", lambda *args, **kw: create_pool(*args, setup=listening, **kw)
    )
    application = create_app(settings, embedder=embedder, database_url=citus_url)
    try:
        async with running(application):
            transport = httpx.ASGITransport(app=application)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as api:
                await a_working_day(api)
    finally:
        await as_owner(citus_url, EMPTY_TABLES)
    replanned = [m["rest"] for m in map(REPLANNED.match, notes) if m]
    assert replanned  # it listened: a store's write is a subplan of its statement
    assert [note for note in notes if WRAPPED.match(note)] == []
    assert [rest for rest in replanned if OUTER_JOIN.search(rest)] == []


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


async def test_a_tenant_moved_to_a_worker_of_its_own_under_traffic_loses_nothing(
    citus_url: str, api: httpx.AsyncClient, db: asyncpg.Connection, database_url: str
) -> None:
    """`agent-memory isolate-tenant --to` while the tenant stores and searches: its rows of
    every table end on a shard of their own on the other worker, every stored memory is
    there afterwards, the new shard is vacuumed and has statistics (which the search
    reads), and a second run finds nothing left to do."""
    where = (
        "SELECT s.shardid, s.nodeport, d.shardminvalue = d.shardmaxvalue AS own"
        " FROM citus_shards s JOIN pg_dist_shard d USING (shardid)"
        " WHERE s.shardid = get_shard_id_for_distribution_column($1, 'default')"
    )
    before = await db.fetchrow(where, "memories")
    assert before is not None and not before["own"]
    other = await db.fetchval(
        "SELECT nodeport FROM pg_dist_node WHERE groupid <> 0 AND nodeport <> $1",
        before["nodeport"],
    )
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

    async def isolate() -> tuple[int, str, str]:
        await isolating.wait()
        try:
            return await run_cli(
                "isolate-tenant",
                "default",
                "--to",
                f"127.0.0.1:{other}",
                DATABASE_URL=database_url,
            )
        finally:
            done.set()

    *_, (code, out, err) = await asyncio.gather(writer(1), writer(2), searcher(), isolate())
    assert code == 0, err
    tenants = [table for table, method in DISTRIBUTED.items() if method == "h"]
    after = {table: await db.fetchrow(where, table) for table in tenants}
    assert all(
        row is not None and row["own"] and row["nodeport"] == other for row in after.values()
    )
    shard = after["memories"]["shardid"]
    assert out.strip() == (
        f"default: shard {shard} of its own, on 127.0.0.1:{other}"
        f" (was shard {before['shardid']} on 127.0.0.1:{before['nodeport']})"
    )
    # Statistics after each copy: the split shard is searched while the move runs.
    steps = [word for word in err.split() if word in ("splitting", "moving", "vacuuming")]
    assert steps == ["splitting", "vacuuming", "moving", "vacuuming"]
    rows = await db.fetch("SELECT id::text FROM memories WHERE tenant_id = 'default'")
    assert sorted(r["id"] for r in rows) == sorted(stored)
    assert len(stored) >= 10
    kept_up = await db.fetchval(
        "SELECT result FROM run_command_on_shards('memories',"
        " $$SELECT pg_stat_get_last_vacuum_time('%1$s'::regclass) IS NOT NULL"
        " AND pg_stat_get_last_analyze_time('%1$s'::regclass) IS NOT NULL$$)"
        " WHERE shardid = $1",
        shard,
    )
    assert kept_up == "t"  # by the command: autovacuum's own rounds are counted apart

    code, out, err = await run_cli("isolate-tenant", "default", DATABASE_URL=database_url)
    assert (code, out.strip()) == (
        0,
        f"default: already on shard {shard} of its own, on 127.0.0.1:{other}",
    ), err
    assert await db.fetchrow(where, "memories") == after["memories"]


@pytest.mark.parametrize("change", ["split", "move"])
async def test_a_search_whose_tenants_shard_changed_after_it_was_planned_asks_for_a_retry(
    citus_url: str, change: str
) -> None:
    """The coordinator picks the tenant's shard and worker when it plans the search's call.
    A split or a move that commits before the call runs (isolate-tenant under traffic; CI
    met the split once) is answered as a retry, nothing written, never a 500 and never the
    shard's old copy, which a move leaves on the old worker for a while; the retry finds the
    tenant's memories where they now are. A cursor holds the planned call while the change
    commits: Bind plans it, the first fetch runs it."""
    tenant = f"t-{change}"
    pool = await asyncpg.create_pool(
        citus_url, min_size=1, max_size=1, init=lambda c: prepare_session(c, ef_search=100)
    )
    database = Database(pool, transaction_settings=search_settings(100))
    database.distributed = True
    owner = await asyncpg.connect(citus_url)
    places = PlacementRepository(owner)  # the statements isolate-tenant runs
    vector = [0.05] * 384
    params = SearchParams("shard changed", vector, 0.6, 10, 50, 200, 0.3, 30, True)
    try:
        async with unit_of_work(database, tenant) as uow:
            await MemoryRepository(uow).upsert_many(
                [(NewMemory("the shard changed under the search"), vector, None)], ["agent"]
            )
        if change == "move":  # a shard of its own first, as isolate-tenant does
            await places.isolate(tenant, "block_writes")
        where = await places.placement(tenant)
        (other,) = [node for node in await places.workers() if node != where.node]
        with pytest.raises(ServiceUnavailableError) as refused:
            async with unit_of_work(database, tenant) as uow:
                conn = await uow.connection()
                statement = search_statement(
                    tenant, MemoryFilter(), params, True, uow.embedding_model
                )
                planned = await conn.cursor(*named(*statement.worker_call()))
                if change == "split":
                    await places.isolate(tenant, "block_writes")
                else:
                    await places.move(where.shard_id, where.node, other, "block_writes")
                await planned.fetch(1)
        assert refused.value.retry_after_s == 1
        assert "retried" in str(refused.value)
        async with unit_of_work(database, tenant) as uow:
            outcome = await SearchRepository(uow).search(MemoryFilter(), params)
        assert [hit.memory.content for hit in outcome.hits] == [
            "the shard changed under the search"
        ]
        now = await places.placement(tenant)
        assert now != where  # the change happened: another shard, or another worker
    finally:
        await owner.close()
        await pool.close()
        await reset_tables(citus_url)


async def test_isolating_a_tenant_refuses_a_node_that_is_not_a_worker(
    citus_url: str, db: asyncpg.Connection, database_url: str
) -> None:
    shard = "SELECT get_shard_id_for_distribution_column('memories', 'default')"
    before = await db.fetchval(shard)
    code, out, err = await run_cli(
        "isolate-tenant", "default", "--to", "127.0.0.1:1", DATABASE_URL=database_url
    )
    assert (code, out) == (2, "")
    assert err.strip().startswith(
        "agent-memory isolate-tenant: 127.0.0.1:1 is not a worker of this cluster (127.0.0.1:"
    )
    assert await db.fetchval(shard) == before


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
    """On Citus, explain-search prints the call that runs the search statement on the
    tenant's worker, ready for psql, and the worker's plan of it: the generic plan of the
    statement prepared there, executed, reading the tenant's shards through their indexes."""
    code, out, err = await run_cli("explain-search", "routed tenant", DATABASE_URL=database_url)
    assert code == 0, err
    script, plan = out.split("-- EXPLAIN (ANALYZE, BUFFERS)")
    assert "memory_search_on_worker(" in script and "WITH model_check AS" in script
    assert re.search(r"Index Scan using memories_pkey_\d+ on memories_\d+", plan)
    assert "Execution Time" in plan
    await runs_in_psql(out, database_url, tmp_path)
