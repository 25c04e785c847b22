"""The embedded server: data survives a restart; an outage answers 503 and heals by itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from app.config import Settings
from app.db.embedded import EmbeddedPostgres
from app.db.migrations import upgrade_head_async
from app.embeddings.hashing import HashEmbedder
from app.main import create_app


@asynccontextmanager
async def serving(url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(database_url=url, db_pool_min=1, db_pool_max=2, embedding_provider="hash")
    app = create_app(settings, embedder=HashEmbedder(384), database_url=url)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            yield client


async def test_memories_survive_a_restart_of_the_embedded_server(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path)
    url = await asyncio.to_thread(server.start)
    await upgrade_head_async(url)
    async with serving(url) as client:
        stored = await client.post("/memories", json={"content": "survives restarts"})
        memory_id = stored.json()["memory"]["id"]
    await asyncio.to_thread(server.stop)

    again = EmbeddedPostgres(tmp_path)
    url = await asyncio.to_thread(again.start)
    try:
        async with serving(url) as client:
            fetched = await client.get(f"/memories/{memory_id}")
            assert fetched.status_code == 200
            assert fetched.json()["content"] == "survives restarts"
    finally:
        await asyncio.to_thread(again.stop)


async def test_database_outage_answers_503_and_recovers_without_restart(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path)
    url = await asyncio.to_thread(server.start)
    await upgrade_head_async(url)
    try:
        async with serving(url) as client:
            assert (await client.post("/memories", json={"content": "before"})).status_code == 201
            await asyncio.to_thread(server.stop)

            during = await client.post("/memories", json={"content": "during the outage"})
            assert during.status_code == 503
            assert during.headers["retry-after"]
            assert during.json()["detail"] == "database unavailable"
            assert (await client.get("/readyz")).status_code == 503

            await asyncio.to_thread(server.start)
            statuses = []
            for _ in range(3):  # broken pooled connections are replaced as they fail
                statuses.append(
                    (await client.post("/memories", json={"content": "after"})).status_code
                )
                if statuses[-1] != 503:
                    break
            assert statuses[-1] in (200, 201)
            listed = await client.get("/memories")
            assert sorted(m["content"] for m in listed.json()["memories"]) == ["after", "before"]
    finally:
        await asyncio.to_thread(server.stop)
