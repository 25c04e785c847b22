"""Idempotency-Key: replays answer the first response and add nothing."""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import pytest

from app.services.keys import KeyService

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus


async def test_replay_answers_the_first_response_and_adds_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    headers = {"Idempotency-Key": "store-1"}
    body = {"content": "Idempotent memory", "tags": ["x"], "source_repo": None}
    first = await api.post("/memories", json=body, headers=headers)
    again = await api.post("/memories", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    row = await db.fetchrow("SELECT count(*) AS n, max(observation_count) AS obs FROM memories")
    assert (row["n"], row["obs"]) == (1, 1)  # not reinforced by the replay

    other = await api.post(
        "/memories", json={"content": "different", "source_repo": None}, headers=headers
    )
    assert other.status_code == 422
    assert other.json()["errors"][0]["field"] == "Idempotency-Key"


async def test_concurrent_retries_end_as_one_write(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    headers = {"Idempotency-Key": "batch-7"}
    body = {"memories": [{"content": f"batch item {i}", "source_repo": None} for i in range(20)]}
    responses = await asyncio.gather(
        *(api.post("/memories/batch", json=body, headers=headers) for _ in range(5))
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(200) >= 1
    assert set(statuses) <= {200, 409}
    assert all(r.headers["retry-after"] for r in responses if r.status_code == 409)
    assert await db.fetchval("SELECT count(*) FROM memories") == 20
    assert await db.fetchval("SELECT max(observation_count) FROM memories") == 1
    # Once finished, every retry is a replay.
    late = await api.post("/memories/batch", json=body, headers=headers)
    assert late.status_code == 200 and late.headers["idempotent-replayed"] == "true"


async def test_errors_are_replayed_too(api: httpx.AsyncClient) -> None:
    bad = {"content": "", "source_repo": None}
    first = await api.post("/memories", json=bad, headers={"Idempotency-Key": "k"})
    again = await api.post("/memories", json=bad, headers={"Idempotency-Key": "k"})
    assert first.status_code == again.status_code == 422
    assert again.headers["content-type"] == "application/problem+json"
    too_long = await api.post("/memories", json=bad, headers={"Idempotency-Key": "k" * 201})
    assert too_long.status_code == 422


async def test_keys_are_per_tenant(api: httpx.AsyncClient, db: asyncpg.Connection) -> None:
    service = KeyService.on_connection(db)
    a = (await service.create("a", "a", "agent")).key
    b = (await service.create("b", "b", "agent")).key
    for key, content in ((a, "tenant a's note"), (b, "tenant b's note")):
        response = await api.post(
            "/memories",
            json={"content": content, "source_repo": None},
            headers={"Idempotency-Key": "same", "Authorization": f"Bearer {key}"},
        )
        assert response.status_code == 201
        assert "idempotent-replayed" not in response.headers
    assert await db.fetchval("SELECT count(*) FROM memories") == 2
