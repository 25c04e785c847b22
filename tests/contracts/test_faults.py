"""The embedding provider down, rate-limited or hanging: nothing is lost, search degrades
and says so, backfill heals."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence

import asyncpg
import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.config import Settings
from app.embeddings.base import EmbeddingError
from app.embeddings.hashing import HashEmbedder
from app.embeddings.openai import OpenAIEmbedder
from app.main import create_app
from tests.conftest import running
from tests.server import free_port


async def test_provider_down_stores_pending_searches_keyword_only_and_backfills(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = app.state.runtime.embedder

    async def down(texts: Sequence[str], **_: object) -> list[list[float]]:
        raise EmbeddingError("upstream said 429 for key sk-secret-token")

    async def down_one(text: str, **_: object) -> list[float]:
        raise EmbeddingError("upstream said 429 for key sk-secret-token")

    with monkeypatch.context() as outage:
        outage.setattr(embedder, "embed", down)
        outage.setattr(embedder, "embed_one", down_one)
        single = await api.post(
            "/memories", json={"content": "Rotate the webhook signing secret", "source_repo": None}
        )
        assert single.status_code == 201
        assert single.json()["memory"]["embedding_state"] == "pending"
        batch = await api.post(
            "/memories/batch",
            json={
                "memories": [
                    {"content": "Webhook retries back off", "source_repo": None},
                    {"content": "Queue depth alert", "source_repo": None},
                ]
            },
        )
        assert batch.status_code == 200
        assert [r["memory"]["embedding_state"] for r in batch.json()["results"]] == ["pending"] * 2

        search = await api.get(
            "/search", params={"q": "webhook signing secret", "track_access": False}
        )
        assert search.status_code == 200
        body = search.json()
        assert body["degraded"] == "keyword-only: the embedding provider is unavailable"
        assert body["alpha"] == 0.0
        assert body["results"][0]["memory"]["content"] == "Rotate the webhook signing secret"
        for response in (single, batch, search):
            assert "sk-secret-token" not in response.text
        hint = await api.get("/strategies/hint", params={"task": "webhooks", "source_repo": "r"})
        assert hint.status_code == 200

    backfill = await api.post("/admin/backfill")
    assert backfill.json() == {"filled": 3}
    memory_id = single.json()["memory"]["id"]
    assert (await api.get(f"/memories/{memory_id}")).json()["embedding_state"] == "ready"
    healed = (
        await api.get("/search", params={"q": "rotating secrets", "track_access": False})
    ).json()
    assert healed["degraded"] is None
    assert healed["results"][0]["vector_similarity"] > 0
    stats = (await api.get("/stats")).json()
    assert stats["health"]["missing_embedding"] == 0


class FakeProvider:
    """A real OpenAI-compatible endpoint on a loopback port whose behaviour the test sets:
    `ok`, `429` (with Retry-After and a secret in its error text) or `hang` (answers only
    when the test lets it). Stopped, its port is a dead endpoint."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.mode = "ok"
        self.requests = 0
        self.let_go = asyncio.Event()
        self._hash = HashEmbedder(384)
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    async def _embeddings(self, request: Request) -> JSONResponse:
        self.requests += 1
        if self.mode == "429":
            return JSONResponse(
                {"error": "rate limited for key sk-provider-secret"},
                status_code=429,
                headers={"Retry-After": "30"},
            )
        if self.mode == "hang":
            await self.let_go.wait()
        texts = (await request.json())["input"]
        vectors = await self._hash.embed(texts)
        return JSONResponse({"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]})

    async def start(self) -> None:
        """Listening when this returns (the socket is bound here), so nothing waits."""
        app = Starlette(routes=[Route("/v1/embeddings", self._embeddings, methods=["POST"])])
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen()
        config = uvicorn.Config(app, log_config=None)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self.let_go.set()
            self._server.should_exit = True
            await self._task
            self._server = None


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_openai_provider_dead_rate_limited_or_hanging_never_costs_a_memory(
    settings: Settings, database_url: str, db: asyncpg.Connection, another_model: None
) -> None:
    provider, clock = FakeProvider(free_port()), Clock()
    embedder = OpenAIEmbedder(
        f"http://127.0.0.1:{provider.port}/v1", "m", 384, "k", timeout_s=0.5, clock=clock
    )
    application = create_app(settings, embedder=embedder, database_url=database_url)
    stored: list[httpx.Response] = []
    try:
        async with running(application):
            transport = httpx.ASGITransport(app=application)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as api:

                async def store(content: str) -> None:
                    # Room for a busy machine; without the service's own bounds (a 0.5 s
                    # timeout, fail-fast while resting) a store would wait on the provider.
                    response = await asyncio.wait_for(
                        api.post("/memories", json={"content": content, "source_repo": None}), 60
                    )
                    stored.append(response)
                    assert response.status_code == 201
                    assert response.json()["memory"]["embedding_state"] == "pending"

                # Dead: nothing listens on the port.
                await store("Stored while the provider is dead")

                # Rate-limited: one call reaches the provider, then it is left to rest for
                # its Retry-After; requests meanwhile fail fast, without calling it.
                clock.now += 2
                await provider.start()
                provider.mode = "429"
                await store("Stored while the provider says 429")
                assert provider.requests == 1
                await store("Stored while the provider rests")
                search = await api.get("/search", params={"q": "provider", "track_access": False})
                assert search.json()["degraded"] is not None
                assert provider.requests == 1

                # Hanging: bounded by the timeout, then resting again.
                clock.now += 31
                provider.mode = "hang"
                # The provider holds this request until let go, after the store returns.
                await store("Stored while the provider hangs")
                assert provider.requests == 2
                provider.let_go.set()

                # Back: the backfill embeds everything stored meanwhile.
                clock.now += 61
                provider.mode = "ok"
                assert (await api.post("/admin/backfill")).json() == {"filled": 4}
                healed = await api.get(
                    "/search", params={"q": "provider rests", "track_access": False}
                )
                assert healed.json()["degraded"] is None
                assert healed.json()["results"][0]["vector_similarity"] > 0
    finally:
        await embedder.aclose()
        await provider.stop()
        await db.execute("TRUNCATE memories, memory_access")
    assert all("sk-provider-secret" not in r.text for r in stored)
    assert all("rate limited" not in r.text for r in stored)
