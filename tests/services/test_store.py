"""POST /memories, batch, read, list, delete: stored vs reinforced, dedup, validation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import asyncpg
import httpx
import numpy as np
import pytest
from fastapi import FastAPI

from app.db.migrations import head_revision
from app.embeddings.base import Embedder

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus


async def store(api: httpx.AsyncClient, **body: Any) -> httpx.Response:
    return await api.post("/memories", json={"source_repo": None, **body})  # global unless named


async def test_new_content_is_stored_with_every_field(api: httpx.AsyncClient) -> None:
    response = await store(
        api,
        content="Always run migrations inside a transaction",
        memory_type="decision",
        category="database",
        tags=["migrations", "postgres"],
        source_repo="acme/api",
        task_id="T-1",
        trust_level="user",
        confidence="high",
        pinned=True,
        source="import",
        name="transactional migrations",
        metadata={"why": "half-applied DDL"},
    )
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "stored"
    memory = body["memory"]
    assert memory["content"] == "Always run migrations inside a transaction"
    assert memory["memory_type"] == "decision"
    assert memory["tags"] == ["migrations", "postgres"]
    assert memory["trust_level"] == "user"
    assert memory["confidence"] == "high"
    assert memory["pinned"] is True
    assert memory["metadata"] == {"why": "half-applied DDL"}
    assert memory["observation_count"] == 1
    assert memory["access_count"] == 0
    assert memory["embedding_state"] == "ready"
    assert len(memory["content_hash"]) == 64
    for key in ("id", "created_at", "last_accessed_at", "archived_at", "superseded_by"):
        assert key in memory
    assert "embedding" not in memory

    fetched = await api.get(f"/memories/{memory['id']}")
    assert fetched.status_code == 200
    assert fetched.json()["content"] == memory["content"]


async def test_same_content_reinforces_merging_tags_and_keeping_confidence(
    api: httpx.AsyncClient,
) -> None:
    first = await store(
        api, content="Prefer  httpx over requests", tags=["python"], confidence="high"
    )
    # Whitespace differences normalise to the same content.
    second = await store(
        api, content="Prefer httpx over requests ", tags=["http", "python"], confidence="low"
    )
    assert first.status_code == 201
    assert second.status_code == 200
    body = second.json()
    assert body["status"] == "reinforced"
    assert body["memory"]["id"] == first.json()["memory"]["id"]
    assert body["memory"]["observation_count"] == 2
    assert body["memory"]["tags"] == ["python", "http"]
    assert body["memory"]["confidence"] == "high"


@pytest.fixture
def embedded(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the server's model is asked to embed, in order."""
    embedder = app.state.runtime.embedder
    texts: list[str] = []
    real_embed = embedder.embed

    async def counting(given: Sequence[str], **kwargs: Any) -> list[list[float]]:
        texts.extend(given)
        vectors: list[list[float]] = await real_embed(given, **kwargs)
        return vectors

    monkeypatch.setattr(embedder, "embed", counting)
    return texts


async def test_reinforcing_an_embedded_memory_costs_no_model_call(
    api: httpx.AsyncClient, db: asyncpg.Connection, embedded: list[str]
) -> None:
    await store(api, content="Pin the lockfile in CI", source_repo="acme/ci")
    assert len(embedded) == 1
    again = await api.post(
        "/memories/batch",
        json={
            "memories": [
                {"content": "Pin the lockfile in CI", "source_repo": "acme/ci"},
                {"content": "Cache the pip wheels", "source_repo": "acme/ci"},
            ]
        },
    )
    assert [r["status"] for r in again.json()["results"]] == ["reinforced", "stored"]
    assert embedded == ["Pin the lockfile in CI", "Cache the pip wheels"]  # the new one only

    # A memory still waiting for its embedding is embedded when it is observed again.
    await db.execute("UPDATE memories SET embedding = NULL WHERE content = 'Cache the pip wheels'")
    healed = await store(api, content="Cache the pip wheels", source_repo="acme/ci")
    assert healed.json()["status"] == "reinforced"
    assert healed.json()["memory"]["embedding_state"] == "ready"
    assert len(embedded) == 3


async def test_context_is_returned_and_the_same_content_in_another_context_reinforces(
    api: httpx.AsyncClient,
) -> None:
    first = await store(
        api, content="Pin the pytest version", context="  flaky CI after a pytest upgrade "
    )
    assert first.status_code == 201
    assert first.json()["memory"]["context"] == "flaky CI after a pytest upgrade"
    second = await store(api, content="Pin the pytest version", context="a fresh checkout")
    assert second.status_code == 200
    memory = second.json()["memory"]
    assert memory["id"] == first.json()["memory"]["id"]
    # Context is not identity: the memory keeps the situation it was first seen in.
    assert memory["context"] == "flaky CI after a pytest upgrade"
    assert (await store(api, content="No context given")).json()["memory"]["context"] is None


async def test_same_content_in_another_repo_is_a_separate_memory(api: httpx.AsyncClient) -> None:
    a = await store(api, content="Cache the JWKS for ten minutes", source_repo="acme/a")
    b = await store(api, content="Cache the JWKS for ten minutes", source_repo="acme/b")
    assert a.status_code == b.status_code == 201
    assert a.json()["memory"]["id"] != b.json()["memory"]["id"]


async def test_fifty_concurrent_identical_posts_leave_one_row(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    body = {"content": "Retry idempotent requests with jitter", "source_repo": "acme/api"}
    responses = await asyncio.gather(*(api.post("/memories", json=body) for _ in range(50)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * 49 + [201]
    rows = await db.fetch("SELECT observation_count FROM memories")
    assert [r["observation_count"] for r in rows] == [50]


async def test_batch_answers_in_input_order_and_reinforces_duplicates(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    contents = [f"Batch memory number {i} about topic {i % 3}" for i in range(20)]
    contents.append(contents[3])
    response = await api.post(
        "/memories/batch",
        json={"memories": [{"content": c, "source_repo": None} for c in contents]},
    )
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["memory"]["content"] for r in results] == contents
    assert [r["status"] for r in results] == ["stored"] * 20 + ["reinforced"]
    assert results[20]["memory"]["id"] == results[3]["memory"]["id"]
    assert await db.fetchval("SELECT count(*) FROM memories") == 20


async def test_a_batch_larger_than_one_model_pass_keeps_every_vector_with_its_text(
    api: httpx.AsyncClient, db: asyncpg.Connection, embedder: Embedder
) -> None:
    # Parts of a large batch are embedded while earlier parts are written.
    contents = [f"Ingest note {i}: shard {i % 7} rebalanced after {i} retries" for i in range(150)]
    contents.append(contents[5])  # a duplicate of a memory from the first part
    response = await api.post(
        "/memories/batch",
        json={"memories": [{"content": c, "source_repo": None} for c in contents]},
    )
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["memory"]["content"] for r in results] == contents
    assert [r["status"] for r in results] == ["stored"] * 150 + ["reinforced"]
    for i in (0, 63, 64, 149):
        stored = await db.fetchval("SELECT embedding FROM memories WHERE content = $1", contents[i])
        assert np.allclose(stored.to_numpy(), await embedder.embed_one(contents[i]), atol=1e-5)


async def test_a_bad_item_rejects_the_whole_batch(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    response = await api.post(
        "/memories/batch",
        json={
            "memories": [
                {"content": "fine memory", "source_repo": None},
                {"content": "   ", "source_repo": None},
                {"content": "also fine", "source_repo": None},
            ]
        },
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "memories.1.content"
    assert await db.fetchval("SELECT count(*) FROM memories") == 0


async def test_batch_over_the_limit_is_413(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/memories/batch",
        json={"memories": [{"content": f"m{i}", "source_repo": None} for i in range(501)]},
    )
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": "", "source_repo": None}, "content"),
        ({"content": "   \n ", "source_repo": None}, "content"),
        ({"content": "x", "trust_level": "root", "source_repo": None}, "trust_level"),
        ({"content": "x", "confidence": "certain", "source_repo": None}, "confidence"),
        ({"content": "x" * 20_001, "source_repo": None}, "content"),
        ({"content": "x", "tags": ["t"] * 33, "source_repo": None}, "tags"),
        ({"content": "x", "tags": ["t" * 65], "source_repo": None}, "tags"),
        ({"content": "x", "context": "c" * 4001, "source_repo": None}, "context"),
        ({"content": "x", "context": "bell \x07", "source_repo": None}, "context"),
        ({"content": "nul \x00 byte", "source_repo": None}, "content"),
        ({"content": "x", "memory_type": "Not A Type", "source_repo": None}, "memory_type"),
        ({"content": "x", "id": "00000000-0000-0000-0000-000000000000"}, "id"),
        ({"content": "x", "access_count": 99}, "access_count"),
        ({"tags": ["no content"]}, "content"),
    ],
)
async def test_bad_input_is_422_naming_the_field_and_stores_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection, body: dict[str, Any], field: str
) -> None:
    response = await api.post("/memories", json=body)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == 422
    assert field in [e["field"] for e in problem["errors"]]
    assert await db.fetchval("SELECT count(*) FROM memories") == 0


async def test_malformed_json_is_a_problem_not_a_500(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/memories", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["title"] == "Unprocessable Content"


async def test_unknown_id_is_404_problem(api: httpx.AsyncClient) -> None:
    missing = "01a20000-0000-7000-8000-000000000000"
    for response in (
        await api.get(f"/memories/{missing}"),
        await api.delete(f"/memories/{missing}"),
    ):
        assert response.status_code == 404
        assert response.json()["detail"] == f"memory {missing} not found"


async def test_delete_removes_the_memory(api: httpx.AsyncClient) -> None:
    memory_id = (await store(api, content="short-lived note")).json()["memory"]["id"]
    assert (await api.delete(f"/memories/{memory_id}")).status_code == 204
    assert (await api.get(f"/memories/{memory_id}")).status_code == 404


async def test_deleting_a_replacement_makes_the_memory_it_replaced_current_again(
    api: httpx.AsyncClient,
) -> None:
    old = (await store(api, content="Deploy on Fridays")).json()["memory"]
    replaced = await api.post(
        f"/memories/{old['id']}/supersede",
        json={"content": "Never deploy on Fridays", "source_repo": None},
    )
    new_id = replaced.json()["replacement"]["memory"]["id"]
    assert replaced.json()["superseded"]["superseded_by"] == new_id
    assert (await api.delete(f"/memories/{new_id}")).status_code == 204
    current = (await api.get(f"/memories/{old['id']}")).json()
    assert current["superseded_by"] is None
    assert current["version"] > replaced.json()["superseded"]["version"]  # a change: new ETag
    listed = (await api.get("/memories")).json()["memories"]
    assert [m["id"] for m in listed] == [old["id"]]


async def test_list_filters_and_paginates_newest_first(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    for i in range(7):
        await store(api, content=f"note {i}", source_repo="r", memory_type="learning", tags=["t"])
    await store(api, content="other repo note", source_repo="elsewhere")
    await store(api, content="archived note", source_repo="r", memory_type="learning", tags=["t"])
    await db.execute("UPDATE memories SET archived_at = now() WHERE content = 'archived note'")

    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {
            "source_repo": "r",
            "memory_type": "learning",
            "tags": "t",
            "limit": 3,
        }
        if cursor:
            params["cursor"] = cursor
        page = (await api.get("/memories", params=params)).json()
        seen += [m["content"] for m in page["memories"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"note {i}" for i in reversed(range(7))]

    with_archived = await api.get(
        "/memories", params={"source_repo": "r", "include_archived": True}
    )
    assert "archived note" in [m["content"] for m in with_archived.json()["memories"]]


async def test_bad_cursor_is_422(api: httpx.AsyncClient) -> None:
    response = await api.get("/memories", params={"cursor": "not-a-cursor"})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "cursor"


async def test_health_and_readiness(api: httpx.AsyncClient) -> None:
    assert (await api.get("/healthz")).json() == {"status": "ok"}
    ready = await api.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["schema"] == head_revision()


async def test_metadata_limits_and_invalid_utf8_store_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    too_big = await api.post(
        "/memories", json={"content": "x", "metadata": {"blob": "y" * 20_000}, "source_repo": None}
    )
    assert too_big.status_code == 422 and too_big.json()["errors"][0]["field"] == "metadata"
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(10):
        node["n"] = {}
        node = node["n"]
    too_deep = await api.post(
        "/memories", json={"content": "x", "metadata": deep, "source_repo": None}
    )
    assert too_deep.status_code == 422 and "deeper" in too_deep.json()["detail"]
    nul = await api.post(
        "/memories", json={"content": "x", "metadata": {"k": "a\u0000b"}, "source_repo": None}
    )
    assert nul.status_code == 422
    invalid_utf8 = await api.post(
        "/memories",
        content=b'{"content": "caf\xe9 latte"}',
        headers={"content-type": "application/json"},
    )
    assert invalid_utf8.status_code in (400, 422)
    assert invalid_utf8.headers["content-type"] == "application/problem+json"
    assert await db.fetchval("SELECT count(*) FROM memories") == 0


async def test_a_near_duplicate_reinforces_the_memory_it_repeats(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    first = (
        await store(api, content="Always pin the Postgres major version in CI images",
                    source_repo="acme/api", memory_type="decision")
    ).json()["memory"]  # fmt: skip
    again = await store(
        api, content="always pin the postgres major version in ci images.",
        source_repo="acme/api", memory_type="decision",
    )  # fmt: skip
    assert again.status_code == 200, again.text
    body = again.json()
    assert (body["status"], body["merged"], body["memory"]["id"]) == (
        "reinforced",
        True,
        first["id"],
    )
    assert body["memory"]["observation_count"] == 2
    assert await db.fetchval("SELECT count(*) FROM memories") == 1
    # Another repository's memory is another memory.
    elsewhere = await store(
        api, content="always pin the postgres major version in ci images.",
        source_repo="acme/web", memory_type="decision",
    )  # fmt: skip
    assert elsewhere.status_code == 201 and not elsewhere.json()["merged"]


async def test_a_likely_contradiction_is_stored_and_names_the_memory_it_may_supersede(
    api: httpx.AsyncClient,
) -> None:
    old = (
        await store(api, content="The vendor API rate limit is 100 rps", source_repo="acme/api")
    ).json()["memory"]
    new = await store(api, content="The vendor API rate limit is 200 rps", source_repo="acme/api")
    assert new.status_code == 201
    assert new.json()["may_supersede"] == old["id"] and not new.json()["merged"]
    # Named, never done: the old memory is as it was.
    assert (await api.get(f"/memories/{old['id']}")).json()["superseded_by"] is None
    said = await api.post(
        "/remember",
        json={
            "text": "The vendor API rate limit is 300 rps since March",
            "source_repo": "acme/api",
        },
    )
    assert said.json()["may_supersede"] in {old["id"], new.json()["memory"]["id"]}
    assert "it may contradict memory" in said.json()["message"]


async def test_different_memories_stay_apart(api: httpx.AsyncClient) -> None:
    await store(api, content="Use ruff for linting", source_repo="acme/api")
    other = await store(api, content="Use ruff for formatting", source_repo="acme/api")
    assert other.status_code == 201
    assert (other.json()["merged"], other.json()["may_supersede"]) == (False, None)


async def test_a_batch_merges_near_duplicates_of_itself_and_of_an_earlier_batch(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    # The chunk's stored neighbours are read in one statement before any of it is written:
    # a near-duplicate of a memory earlier in the same chunk is found by the service, one of
    # an earlier chunk or batch by the statement.
    def note(i: int) -> dict[str, Any]:
        return {"content": f"Note {i}: the {i}th queue drains after {i} retries",
                "source_repo": "acme/api", "memory_type": "learning"}  # fmt: skip

    first = await api.post("/memories/batch", json={"memories": [note(i) for i in range(3)]})
    pinned = "Always pin the Postgres major version in CI images"
    memories = [note(i) for i in range(3, 100)]
    memories[2] = {"content": pinned, "source_repo": "acme/api", "memory_type": "decision"}
    near = {"content": pinned.lower() + ".", "source_repo": "acme/api", "memory_type": "decision"}
    memories[10] = near  # in the same chunk as its twin
    memories[80] = near | {"content": "always pin the postgres major version in ci images!"}
    memories[90] = near | {"source_repo": "acme/web"}  # another repository's memory
    memories[95] = note(1) | {"content": "note 1: the 1th queue drains after 1 retries."}
    paging = {"content": "Prefer keyset paging over OFFSET on large tables",
              "source_repo": None, "memory_type": "code_pattern"}  # fmt: skip
    memories[20], memories[30] = paging, paging | {"content": "prefer keyset paging over offset"
                                                   " on large tables."}  # fmt: skip
    response = await api.post("/memories/batch", json={"memories": memories})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    twin = results[2]["memory"]["id"]
    assert results[2]["status"] == "stored"
    for i in (10, 80):
        assert (results[i]["status"], results[i]["merged"], results[i]["memory"]["id"]) == (
            "reinforced", True, twin,
        )  # fmt: skip
    assert results[90]["status"] == "stored" and results[90]["memory"]["id"] != twin
    assert (results[30]["merged"], results[30]["memory"]["id"]) == (
        True, results[20]["memory"]["id"],
    )  # fmt: skip
    earlier = first.json()["results"][1]["memory"]["id"]
    assert (results[95]["merged"], results[95]["memory"]["id"]) == (True, earlier)
    assert await db.fetchval("SELECT observation_count FROM memories WHERE id = $1", twin) == 3
    assert await db.fetchval("SELECT count(*) FROM memories") == 3 + len(memories) - 4


async def test_a_contradiction_inside_a_batch_names_the_memory_before_it(
    api: httpx.AsyncClient,
) -> None:
    response = await api.post(
        "/memories/batch",
        json={
            "memories": [
                {"content": "The vendor API rate limit is 100 rps", "source_repo": "acme/api"},
                {"content": "The vendor API rate limit is 200 rps", "source_repo": "acme/api"},
            ]
        },
    )
    old, new = response.json()["results"]
    assert new["status"] == "stored" and new["may_supersede"] == old["memory"]["id"]


async def test_a_secret_in_item_37_refuses_the_whole_batch_before_the_model_sees_any(
    api: httpx.AsyncClient, db: asyncpg.Connection, embedded: list[str]
) -> None:
    memories = [{"content": f"Batch note {i} on retries", "source_repo": None} for i in range(100)]
    memories[37]["content"] = "the deploy token is ghp_" + "k3J9xQ2mZ7vL1pR8tY4wN6bH0cF5dG2sA9eU"
    response = await api.post("/memories/batch", json={"memories": memories})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "memories.37.content"
    assert await db.fetchval("SELECT count(*) FROM memories") == 0
    assert embedded == []  # a remote model would have been sent the other 99
