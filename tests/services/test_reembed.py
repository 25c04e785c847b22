"""Changing the embedding model of a populated database while servers keep serving: the
target's vectors filled beside the live ones, resumable, swapped in one transaction; a
server left on the old model degrades to keyword search and pending embeddings, never to
wrong vectors."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.db.migrations import upgrade_head_async
from app.domain.errors import ConflictError
from app.domain.memory import embedding_text
from app.embeddings.base import Embedder
from app.embeddings.hashing import HashEmbedder
from app.main import create_app
from app.services.reembed import Reembedder
from app.startup import StartupError
from tests.conftest import running

pytestmark = pytest.mark.single_node  # a re-embed is for one PostgreSQL (docs/operations.md)


class TargetModel(HashEmbedder):
    """A model of another name and size than the stored vectors', counting its texts."""

    name = "hash:48"

    def __init__(self) -> None:
        super().__init__(48)
        self.texts = 0

    async def embed(
        self, texts: Sequence[str], *, tenant: str = "", interactive: bool = False
    ) -> list[list[float]]:
        self.texts += len(texts)
        return await super().embed(texts)


@pytest.fixture
async def database(scratch_database: Any) -> str:
    url: str = await scratch_database("agent_memory_reembed")
    await upgrade_head_async(url)
    return url


@asynccontextmanager
async def server(url: str, embedder: Embedder) -> AsyncIterator[httpx.AsyncClient]:
    application: FastAPI = create_app(
        Settings(database_url=url, db_pool_min=1, db_pool_max=4),
        embedder=embedder,
        database_url=url,
    )
    async with running(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield client


@asynccontextmanager
async def owner(url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(url)
    await register_vector(conn)
    try:
        yield conn
    finally:
        await conn.close()


async def store(client: httpx.AsyncClient, texts: list[str]) -> None:
    for text in texts:
        response = await client.post("/memories", json={"content": text, "source_repo": None})
        assert response.status_code == 201, response.text


async def search(client: httpx.AsyncClient, query: str) -> list[dict[str, Any]]:
    response = await client.get("/search", params={"q": query})
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    assert results
    return results


def by_vectors(results: list[dict[str, Any]]) -> bool:
    """Whether the vector side took part."""
    return max(float(r["vector_similarity"]) for r in results) > 0


async def test_a_model_change_under_traffic_keeps_every_memory_findable(
    database: str, embedder: Embedder
) -> None:
    target = TargetModel()
    notes = [f"deploy note {i}: the rollout of service {i % 7} needs a canary" for i in range(30)]
    async with server(database, embedder) as old, owner(database) as conn:
        await store(old, notes)
        reembedder = Reembedder(conn, target, batch=8)
        await reembedder.start()
        assert await reembedder.fill(max_batches=2) == 16  # then the process stops

        # Meanwhile the service goes on with the old vectors, and says how far it is.
        await store(old, ["a canary caught the bad rollout of service 3"])
        assert by_vectors(await search(old, "canary rollout"))
        progress = (await old.get("/stats")).json()["health"]["reembedding"]
        assert (progress["target_model"], progress["filled"], progress["total"]) == (
            "hash:48",
            16,
            31,
        )
        page = (await old.get("/console/stats")).text
        assert "re-embedding to <code>hash:48</code>" in page and "16 of 31 done" in page

        # Run again (as after a restart): only what is left is embedded, then the swap.
        target.texts = 0
        await Reembedder(conn, target, batch=8).run()
        assert target.texts == 31 - 16

        rows = await conn.fetch(
            "SELECT content, name, category, context, embedding FROM memories ORDER BY id"
        )
        expected = await target.embed(
            [embedding_text(r["content"], r["name"], r["category"], r["context"]) for r in rows]
        )
        stored = [r["embedding"].to_list() for r in rows]
        assert len(stored) == len(expected) == 31
        for got, want in zip(stored, expected, strict=True):
            assert got == pytest.approx(want, abs=1e-6)
        schema = await conn.fetchrow(
            """
            SELECT (SELECT name FROM embedding_model) AS model,
                   (SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memories'::regclass
                      AND attname = 'embedding') AS dimensions,
                   (SELECT attstorage FROM pg_attribute WHERE attrelid = 'memories'::regclass
                      AND attname = 'embedding')::text AS storage,
                   (SELECT count(*) FROM pg_attribute WHERE attrelid = 'memories'::regclass
                      AND attname LIKE 'embedding_%' AND NOT attisdropped) AS other_columns,
                   (SELECT count(*) FROM reembedding) AS under_way,
                   (SELECT array_agg(indexname ORDER BY indexname) FROM pg_indexes
                    WHERE tablename = 'memories' AND indexdef LIKE '%embedding%') AS indexes
            """
        )
        assert dict(schema) == {
            "model": "hash:48",
            "dimensions": 48,
            "storage": "m",  # kept in the row, as before the swap (migration 0027)
            "other_columns": 0,
            "under_way": 0,
            # Each made on the new column and renamed to the live one's name.
            "indexes": [
                "memories_embedding_hnsw",
                "memories_incomplete_key",
                "memories_scope_vectors_key",
            ],
        }

        # A server still on the old model: keyword search, stores pending, no error.
        assert not by_vectors(await search(old, "canary rollout"))
        answer = (await old.get("/search", params={"q": "canary rollout"})).json()
        assert answer["alpha"] == 0 and "another model's" in answer["degraded"]
        await store(old, ["stored by a server not yet restarted"])
        pending = await conn.fetchval("SELECT count(*) FROM memories WHERE embedding IS NULL")
        assert pending == 1
        assert (await old.post("/admin/backfill")).json() == {"filled": 0}  # not its vectors

    # Restarted on the new model: it starts, fills the pending vector, searches by both.
    async with server(database, target) as new:
        assert (await new.post("/admin/backfill")).json() == {"filled": 1}
        assert by_vectors(await search(new, "canary rollout"))
    # And a server on the old model no longer starts: its vectors are not the stored ones.
    with pytest.raises(StartupError, match="hash:48"):
        async with server(database, embedder):
            pass


async def test_one_re_embed_at_a_time_and_never_to_the_same_model(
    database: str, embedder: Embedder
) -> None:
    async with server(database, embedder) as old, owner(database) as conn:
        await store(old, ["one memory"])
        with pytest.raises(ConflictError, match="already"):
            await Reembedder(conn, embedder).start()
        await Reembedder(conn, TargetModel()).start()
        other = HashEmbedder(48)  # same size, another name
        with pytest.raises(ConflictError, match="under way"):
            await Reembedder(conn, other).start()


async def test_a_cancelled_re_embed_leaves_the_schema_as_it_was(
    database: str, embedder: Embedder
) -> None:
    async with server(database, embedder) as old, owner(database) as conn:
        await store(old, [f"memory {i}" for i in range(10)])
        reembedder = Reembedder(conn, TargetModel(), batch=4)
        await reembedder.start()
        await reembedder.fill(max_batches=1)
        await reembedder.cancel()
        columns = await conn.fetchval(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = 'memories'::regclass"
            " AND attname = 'embedding_next' AND NOT attisdropped"
        )
        assert columns == 0
        assert (await reembedder.status()).under_way is None
        assert (await old.get("/stats")).json()["health"]["reembedding"] is None
        assert by_vectors(await search(old, "memory"))


async def test_the_command_re_embeds_and_reports(database: str, embedder: Embedder) -> None:
    async with server(database, embedder) as old:
        await store(old, [f"command memory {i}" for i in range(5)])
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "EMBEDDING_PROVIDER": "hash",
        "EMBEDDING_DIM": "48",
    }

    def reembed(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app.cli", "reembed", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = await asyncio.to_thread(reembed)
    assert done.returncode == 0, done.stderr
    assert "done: the stored vectors are hash's" in done.stderr
    status = await asyncio.to_thread(reembed, "--status")
    assert status.stdout.strip() == "vectors by hash; no re-embed under way"
    again = await asyncio.to_thread(reembed)
    assert again.returncode == 2 and "already hash's" in again.stderr


GRAPHED = [
    "The billing worker retries a declined card three times before it gives up",
    "Use the make target to regenerate the protobuf stubs, never protoc by hand",
    "Redis keys for sessions expire after thirty minutes of inactivity",
    "The CI pipeline caches pip wheels between runs on the main branch",
    "Alembic migrations must be reversible and tested with a downgrade",
    "The image resizer rejects uploads larger than twenty megabytes",
]


async def test_a_repositorys_graph_goes_with_the_old_vectors_and_is_built_again(
    database: str, embedder: Embedder
) -> None:
    async with server(database, embedder) as old:
        for text in GRAPHED:
            response = await old.post("/memories", json={"content": text, "source_repo": "acme/g"})
            assert response.status_code == 201, response.text
    env = {**os.environ, "DATABASE_URL": database, "REPOSITORY_GRAPH_ROWS": "5"}

    def command(*args: str, **more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app.cli", *args],
            env={**env, **more},
            capture_output=True,
            text=True,
            timeout=120,
        )

    async def graphs_on() -> list[str]:
        async with owner(database) as conn:
            rows = await conn.fetch(
                "SELECT pg_get_indexdef(indexrelid) AS made FROM pg_index i"
                " JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE 'memories_graph_%'"
            )
        return [row["made"] for row in rows]

    planned = await asyncio.to_thread(command, "graphs", "--dry-run")
    assert planned.returncode == 0, planned.stderr
    assert planned.stdout.startswith("build memories_graph_")
    assert "default/acme/g, 6 live memories" in planned.stdout
    assert await graphs_on() == []
    built = await asyncio.to_thread(command, "graphs")
    assert built.returncode == 0 and built.stdout.startswith("built memories_graph_"), built.stderr
    (made,) = await graphs_on()
    assert "USING hnsw (embedding vector_cosine_ops)" in made
    assert "tenant_id = 'default'::text" in made and "source_repo = 'acme/g'::text" in made
    reembedded = await asyncio.to_thread(
        command, "reembed", EMBEDDING_PROVIDER="hash", EMBEDDING_DIM="48"
    )
    assert reembedded.returncode == 0, reembedded.stderr
    assert await graphs_on() == []  # gone with the old column
    again = await asyncio.to_thread(command, "graphs")
    assert again.returncode == 0 and again.stdout.startswith("built memories_graph_"), again.stderr
    (remade,) = await graphs_on()
    assert remade == made  # the same graph, on the column now called embedding
    kept = await asyncio.to_thread(command, "graphs")
    assert kept.stdout.startswith("kept memories_graph_"), kept.stdout
