"""The database pool is bounded: extra requests queue, then get 503; nothing leaks."""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.db.unit_of_work import unit_of_work
from app.embeddings.base import Embedder
from app.main import create_app
from tests.conftest import EMPTY_TABLES, running
from tests.doubles import GatedEmbedder

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

OURS = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'agent-memory'"


async def test_more_clients_than_connections_queue_then_503_and_nothing_leaks(
    settings: Settings, embedder: Embedder, database_url: str, db: asyncpg.Connection
) -> None:
    # Queued requests wait as long as a busy machine needs: this part is about queueing,
    # not about speed. The refusal below shortens the wait to one second.
    small = Settings(
        **{**settings.model_dump(), "db_pool_min": 1, "db_pool_max": 2, "db_acquire_timeout_s": 300}
    )
    others = await db.fetchval(OURS)  # the session-wide test app's own idle connections
    application = create_app(small, embedder=embedder, database_url=database_url)
    try:
        async with running(application):
            transport = httpx.ASGITransport(app=application)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                # 64 clients at once on 2 connections: they queue, and all succeed.
                peak, done = 0, asyncio.Event()

                async def sample() -> None:
                    nonlocal peak
                    while not done.is_set():
                        peak = max(peak, await db.fetchval(OURS) - others)
                        await asyncio.sleep(0.005)

                async def one(i: int) -> int:
                    if i % 2:
                        response = await client.get("/search", params={"q": f"queued note {i}"})
                    else:
                        response = await client.post(
                            "/memories", json={"content": f"queued note {i}", "source_repo": None}
                        )
                    return response.status_code

                sampler = asyncio.create_task(sample())
                statuses = await asyncio.gather(*(one(i) for i in range(64)))
                done.set()
                await sampler
                assert sorted(set(statuses)) == [200, 201]
                assert 1 <= peak <= 2
                assert await db.fetchval("SELECT count(*) FROM memories") == 32

                # Every connection held elsewhere (long requests): the next request waits
                # DB_ACQUIRE_TIMEOUT_S, then answers 503 with Retry-After instead of hanging.
                database = application.state.runtime.database
                database.acquire_timeout_s = 1
                pool = database.pool
                held = [await pool.acquire() for _ in range(2)]
                loop = asyncio.get_running_loop()
                started = loop.time()
                refused = await client.get("/memories")
                waited = loop.time() - started
                assert refused.status_code == 503
                assert refused.headers["retry-after"]
                assert 1 <= waited < 300  # it gave up after its timeout, not the queue's
                for conn in held:
                    await pool.release(conn)
                assert (await client.get("/memories")).status_code == 200
    finally:
        await db.execute("TRUNCATE memories, memory_access")
    idle_in_transaction = await db.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'"
    )
    assert idle_in_transaction == 0
    assert await db.fetchval(OURS) == others  # the pool closed all of its connections


async def test_pooled_connections_keep_their_search_settings_after_reuse(
    app: FastAPI, api: httpx.AsyncClient
) -> None:
    """asyncpg's default reset (RESET ALL) would drop them after a connection's first use,
    and filtered HNSW searches would quietly return short lists."""
    for _ in range(3):
        assert (await api.get("/search", params={"q": "anything"})).status_code == 200
    pool = app.state.runtime.database.pool
    connections = [await pool.acquire() for _ in range(pool.get_size())]
    try:
        for conn in connections:
            assert await conn.fetchval("SHOW hnsw.iterative_scan") == "relaxed_order"
            assert await conn.fetchval("SHOW hnsw.ef_search") == str(
                app.state.runtime.settings.hnsw_ef_search
            )
            assert await conn.fetchval("SELECT current_user") == "agent_memory_app"
    finally:
        for conn in connections:
            await pool.release(conn)


@pytest.mark.single_node  # on Citus a write leaves no trace on the coordinator to tell by
async def test_a_store_holds_no_connection_while_its_text_is_embedded(
    settings: Settings, database_url: str, db: asyncpg.Connection, another_model: None
) -> None:
    one = Settings(
        **{**settings.model_dump(), "db_pool_min": 1, "db_pool_max": 1, "db_acquire_timeout_s": 2}
    )
    embedder = GatedEmbedder()
    application = create_app(one, embedder=embedder, database_url=database_url)
    try:
        async with running(application):
            transport = httpx.ASGITransport(app=application)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                storing = asyncio.create_task(
                    client.post(
                        "/memories",
                        json={"content": "Embedded without a slot", "source_repo": None},
                    )
                )
                await embedder.entered.wait()
                # The only pooled connection is free while the model works.
                assert (await client.get("/memories")).status_code == 200
                embedder.gate.set()
                assert (await storing).status_code == 201
    finally:
        await db.execute("TRUNCATE memories, memory_access")


async def test_a_transaction_that_has_written_keeps_its_connection(
    app: FastAPI, api: httpx.AsyncClient, db: asyncpg.Connection, distributed: bool
) -> None:
    database = app.state.runtime.database
    with pytest.raises(RuntimeError):
        async with unit_of_work(database, "default") as uow:
            conn = await uow.connection()
            # Nothing written: let go (on Citus the coordinator cannot tell, so it holds on).
            assert await uow.release_if_unwritten() is not distributed
            conn = await uow.connection()
            await conn.execute(
                "INSERT INTO memories (tenant_id, content, content_hash)"
                " VALUES ('default', 'half a unit of work', memory_content_hash('x'))"
            )
            assert not await uow.release_if_unwritten()
            raise RuntimeError("the caller fails after its first write")
    assert await db.fetchval("SELECT count(*) FROM memories") == 0


# The search statements a connection has prepared (asyncpg names each, and keeps it).
PREPARED_SEARCHES = """
SELECT statement FROM pg_prepared_statements
WHERE statement LIKE '%memory_vector_candidates%' OR statement LIKE '%memory_search_on_worker%'
"""


async def test_a_new_pooled_connection_has_run_its_warm_up_before_its_first_search(
    settings: Settings, embedder: Embedder, database_url: str, db: asyncpg.Connection
) -> None:
    """Its first search finds its statement prepared and planned (app/db/pool.py), as the
    hooks send them: a recall on a prompt, with its session, and a repository's search."""
    one = Settings(**{**settings.model_dump(), "db_pool_min": 1, "db_pool_max": 1})
    application = create_app(one, embedder=embedder, database_url=database_url)
    try:
        async with running(application):
            pool = application.state.runtime.database.pool
            async with pool.acquire() as conn:  # the pool's one connection, new
                before = {row["statement"] for row in await conn.fetch(PREPARED_SEARCHES)}
            transport = httpx.ASGITransport(app=application)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                stored = await client.post(
                    "/memories", json={"content": "Pin the CI image", "source_repo": "acme/api"}
                )
                assert stored.status_code == 201
                session = await client.post("/sessions", json={"source_repo": "acme/api"})
                recall = {
                    "q": "which CI image", "source_repo": "acme/api", "purpose": "prompt",
                    "session_id": session.json()["session_id"],
                }  # fmt: skip
                assert (await client.post("/recall", json=recall)).status_code == 200
                searched = await client.get(
                    "/search", params={"q": "CI image", "source_repo": "acme/api"}
                )
                assert searched.json()["results"]
            async with pool.acquire() as conn:
                after = {row["statement"] for row in await conn.fetch(PREPARED_SEARCHES)}
    finally:
        await db.execute(EMPTY_TABLES)
    assert before  # the warm-up prepared the search statements
    assert after == before  # and the searches found theirs among them
