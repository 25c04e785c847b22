"""The embedding provider down: nothing is lost, search degrades and says so, backfill heals."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pytest
from fastapi import FastAPI

from app.embeddings.base import EmbeddingError


async def test_provider_down_stores_pending_searches_keyword_only_and_backfills(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = app.state.runtime.embedder

    async def down(texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingError("upstream said 429 for key sk-secret-token")

    async def down_one(text: str) -> list[float]:
        raise EmbeddingError("upstream said 429 for key sk-secret-token")

    with monkeypatch.context() as outage:
        outage.setattr(embedder, "embed", down)
        outage.setattr(embedder, "embed_one", down_one)
        single = await api.post("/memories", json={"content": "Rotate the webhook signing secret"})
        assert single.status_code == 201
        assert single.json()["memory"]["embedding_state"] == "pending"
        batch = await api.post(
            "/memories/batch",
            json={
                "memories": [
                    {"content": "Webhook retries back off"},
                    {"content": "Queue depth alert"},
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
