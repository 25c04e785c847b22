"""Forgetting (prune), restore, supersede, edit, stats and metrics."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

import asyncpg
import httpx
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.domain.memory import embedding_text
from app.embeddings.base import Embedder
from app.logging import JsonFormatter
from app.telemetry import STORE_PHASES

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus


async def store(api: httpx.AsyncClient, content: str, **fields: Any) -> dict[str, Any]:
    # Global unless the test names a repository.
    response = await api.post("/memories", json={"content": content, "source_repo": None, **fields})
    assert response.status_code == 201, response.text
    memory: dict[str, Any] = response.json()["memory"]
    return memory


async def age(db: asyncpg.Connection, memory: dict[str, Any], days: int, accesses: int = 0) -> None:
    """Ages are written, never waited for."""
    memory_id = uuid.UUID(memory["id"])
    await db.execute(
        "UPDATE memories SET created_at = now() - make_interval(days => $2) WHERE id = $1",
        memory_id,
        days,
    )
    await count_reads(db, memory_id, accesses, last=None)


async def count_reads(
    db: asyncpg.Connection, memory_id: uuid.UUID, reads: int, last: str | None = "now()"
) -> None:
    """The memory's access counts as searches would have left them."""
    await db.execute(
        "INSERT INTO memory_access (tenant_id, memory_id, access_count, last_accessed_at)"
        f" SELECT tenant_id, id, $2, {last or 'NULL'} FROM memories WHERE id = $1"
        " ON CONFLICT (tenant_id, memory_id) DO UPDATE"
        " SET access_count = EXCLUDED.access_count, last_accessed_at = EXCLUDED.last_accessed_at",
        memory_id,
        reads,
    )


async def archived_contents(db: asyncpg.Connection) -> set[str]:
    rows = await db.fetch("SELECT content FROM memories WHERE archived_at IS NOT NULL")
    return {r["content"] for r in rows}


async def test_each_pruning_rule_and_exemption(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    cases: dict[str, tuple[int, int, dict[str, Any]]] = {
        "unused for 91 days": (91, 0, {}),
        "unused for 89 days": (89, 0, {}),
        "used once, 100 days": (100, 1, {}),
        "used twice in 366 days": (366, 2, {}),
        "used three times in 366 days": (366, 3, {}),
        "pinned and unused for a year": (400, 0, {"pinned": True}),
        "decision unused for 120 days": (120, 0, {"memory_type": "decision"}),
    }
    memories = {}
    for content, (days, accesses, fields) in cases.items():
        memories[content] = await store(api, content, **fields)
        await age(db, memories[content], days, accesses)
    superseded = await store(api, "superseded and unused for 200 days")
    await age(db, superseded, 200)
    await db.execute(
        "UPDATE memories SET superseded_by = $2 WHERE id = $1",
        uuid.UUID(superseded["id"]),
        uuid.UUID(memories["unused for 89 days"]["id"]),
    )
    already = await store(api, "archived long ago")
    await age(db, already, 500)
    await db.execute(
        "UPDATE memories SET archived_at = now() - interval '1 day' WHERE id = $1",
        uuid.UUID(already["id"]),
    )

    response = await api.post("/prune")
    assert response.status_code == 200
    body = response.json()
    assert body["archived"] == {"general": 2, "decision": 1}
    assert body["total_archived"] == 3
    assert body["message"] == "3 item(s) archived based on Ebbinghaus forgetting curve."
    assert await archived_contents(db) == {
        "unused for 91 days",
        "used twice in 366 days",
        "decision unused for 120 days",
        "archived long ago",
    }
    again = (await api.post("/prune")).json()
    assert again["total_archived"] == 0
    assert again["message"] == "Nothing to archive -- all items are fresh or recently accessed."


async def test_dry_run_lists_ids_and_changes_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    old = await store(api, "forgotten note", source_repo="a")
    other = await store(api, "forgotten elsewhere", source_repo="b")
    await age(db, old, 200)
    await age(db, other, 200)
    dry = (await api.post("/prune", json={"dry_run": True, "source_repo": "a"})).json()
    assert dry["dry_run"] is True
    assert dry["would_archive_ids"] == [old["id"]]
    assert dry["message"] == "1 item(s) would be archived based on Ebbinghaus forgetting curve."
    assert await archived_contents(db) == set()
    scoped = (await api.post("/prune", json={"source_repo": "a"})).json()
    assert scoped["total_archived"] == 1
    assert await archived_contents(db) == {"forgotten note"}


async def test_prune_lock_is_exclusive(
    api: httpx.AsyncClient, db: asyncpg.Connection, database_url: str
) -> None:
    for i in range(20):
        await age(db, await store(api, f"stale memory {i}"), 120)
    holder = await asyncpg.connect(database_url)
    try:
        async with holder.transaction():
            await holder.execute(
                "SELECT pg_advisory_xact_lock("
                "hashtextextended('agent-memory:prune:' || 'default', 0))"
            )
            blocked = (await api.post("/prune")).json()
            assert blocked["total_archived"] == 0
            assert "already running" in blocked["message"]
            assert await archived_contents(db) == set()
    finally:
        await holder.close()
    results = await asyncio.gather(*(api.post("/prune") for _ in range(4)))
    assert sum(r.json()["total_archived"] for r in results) == 20
    assert len(await archived_contents(db)) == 20


async def test_restore_brings_an_archived_memory_back(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    memory = await store(api, "restorable")
    await age(db, memory, 100)
    await api.post("/prune")
    assert (await api.get(f"/memories/{memory['id']}")).json()["archived_at"] is not None
    restored = await api.post(f"/memories/{memory['id']}/restore")
    assert restored.status_code == 200
    assert restored.json()["archived_at"] is None
    assert (await api.post(f"/memories/{uuid.uuid4()}/restore")).status_code == 404


async def test_supersede_is_atomic_and_hides_the_old_memory(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    old = await store(api, "Deploys run on Jenkins", source_repo="acme/api", memory_type="decision")
    response = await api.post(
        f"/memories/{old['id']}/supersede",
        json={
            "content": "Deploys run on GitHub Actions",
            "memory_type": "decision",
            "source_repo": None,
        },
    )
    assert response.status_code == 201
    body = response.json()
    new = body["replacement"]["memory"]
    assert body["superseded"]["superseded_by"] == new["id"]
    assert new["source_repo"] == "acme/api"  # inherited

    results = (
        await api.get("/search", params={"q": "deploys run on", "track_access": False})
    ).json()
    assert [r["memory"]["id"] for r in results["results"]] == [new["id"]]
    listed = (await api.get("/memories")).json()["memories"]
    assert [m["id"] for m in listed] == [new["id"]]
    assert (await api.get(f"/memories/{old['id']}")).status_code == 200

    # Superseding again: 409, and the would-be replacement is not left behind.
    twice = await api.post(
        f"/memories/{old['id']}/supersede",
        json={"content": "Deploys run on Buildkite", "source_repo": None},
    )
    assert twice.status_code == 409
    missing = await api.post(
        f"/memories/{uuid.uuid4()}/supersede", json={"content": "orphan", "source_repo": None}
    )
    assert missing.status_code == 404
    contents = {r["content"] for r in await db.fetch("SELECT content FROM memories")}
    assert contents == {"Deploys run on Jenkins", "Deploys run on GitHub Actions"}


async def test_patch_edits_metadata_fields_but_never_content(api: httpx.AsyncClient) -> None:
    memory = await store(api, "Editable memory", tags=["a"], category="x")
    response = await api.patch(
        f"/memories/{memory['id']}",
        json={
            "tags": ["b", "c"],
            "pinned": True,
            "confidence": "high",
            "category": None,
            "metadata": {"k": 1},
        },
    )
    assert response.status_code == 200
    edited = response.json()
    assert (edited["tags"], edited["pinned"], edited["confidence"]) == (["b", "c"], True, "high")
    assert edited["category"] is None and edited["metadata"] == {"k": 1}
    assert edited["content"] == "Editable memory"
    content = await api.patch(
        f"/memories/{memory['id']}", json={"content": "changed", "source_repo": None}
    )
    assert content.status_code == 422
    assert "supersede" in content.json()["errors"][0]["message"]
    assert (await api.patch(f"/memories/{uuid.uuid4()}", json={"pinned": True})).status_code == 404


async def test_patching_the_category_re_embeds_the_memory(
    api: httpx.AsyncClient, db: asyncpg.Connection, embedder: Embedder
) -> None:
    memory = await store(api, "Run the migrations before deploying", category="database")
    memory_id = uuid.UUID(memory["id"])
    response = await api.patch(f"/memories/{memory['id']}", json={"category": "frontend"})
    assert response.status_code == 200
    assert response.json()["embedding_state"] == "ready"
    stored = np.array(
        await db.fetchval("SELECT embedding::real[] FROM memories WHERE id = $1", memory_id)
    )
    (expected,) = await embedder.embed(
        [embedding_text("Run the migrations before deploying", None, "frontend")]
    )
    assert float(stored @ np.array(expected)) > 0.999
    # Edits that the embedding does not read leave it alone.
    await api.patch(f"/memories/{memory['id']}", json={"tags": ["ci"]})
    after = await db.fetchval("SELECT embedding::real[] FROM memories WHERE id = $1", memory_id)
    assert np.array(after).tolist() == stored.tolist()


async def test_stats_against_a_known_fixture(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    a = await store(
        api, "decision one", memory_type="decision", trust_level="user", source_repo="r"
    )
    b = await store(api, "decision two", memory_type="decision", confidence="high", source_repo="r")
    c = await store(
        api, "an error pattern", memory_type="error_pattern", pinned=True, source_repo="r"
    )
    d = await store(api, "archived learning", memory_type="learning", source_repo="r")
    await store(api, "other repo", source_repo="elsewhere")
    await db.execute("UPDATE memories SET archived_at = now() WHERE id = $1", uuid.UUID(d["id"]))
    await count_reads(db, uuid.UUID(b["id"]), 5)
    await count_reads(db, uuid.UUID(a["id"]), 2)
    await db.execute("UPDATE memories SET embedding = NULL WHERE id = $1", uuid.UUID(c["id"]))
    stale = await store(api, "stale general", source_repo="r")
    await age(db, stale, 100)

    stats = (await api.get("/stats", params={"source_repo": "r"})).json()
    assert stats["total"] == 5
    assert stats["by_memory_type"] == {
        "decision": 2,
        "error_pattern": 1,
        "learning": 1,
        "general": 1,
    }
    assert stats["by_trust_level"] == {"user": 1, "agent": 4}
    assert stats["by_confidence"] == {"medium": 4, "high": 1}
    assert (stats["active"], stats["archived"], stats["superseded"], stats["pinned"]) == (
        4,
        1,
        0,
        1,
    )
    assert stats["health"]["missing_embedding"] == 1
    assert stats["health"]["missing_search_vector"] == 0
    assert stats["health"]["integrity_failures"] == 0
    assert stats["health"]["hint"]
    assert [m["id"] for m in stats["top_accessed"]["decision"]] == [b["id"], a["id"]]
    assert stats["top_accessed"]["decision"][0]["access_count"] == 5
    assert stats["next_prune"]["would_archive"] == 1


async def test_stats_count_each_state_each_repository_and_the_last_days(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """The totals add up (a quarantined memory is counted as such, not lost between active
    and archived), each repository is listed with the global memories as null, and the
    last 30 UTC days say what was stored and how many sessions started."""
    today = await store(api, "stored today in the api", source_repo="acme/api")
    await age(db, await store(api, "stored two days ago", source_repo="acme/api"), 2)
    await age(db, await store(api, "stored forty days ago", source_repo="acme/api"), 40)
    await store(api, "stored today in the web app", source_repo="acme/web")
    await store(api, "a global convention stored today")
    await db.execute(
        "UPDATE memories SET quarantined_at = now() WHERE id = $1", uuid.UUID(today["id"])
    )
    await api.post("/sessions", json={"source_repo": "acme/api"})

    stats = (await api.get("/stats")).json()
    assert (stats["total"], stats["active"], stats["quarantined"], stats["archived"]) == (
        5,
        4,
        1,
        0,
    )
    assert stats["repositories"] == 3
    assert stats["by_repository"] == [
        {"source_repo": "acme/api", "total": 3, "active": 2},
        {"source_repo": None, "total": 1, "active": 1},
        {"source_repo": "acme/web", "total": 1, "active": 1},
    ]
    days = stats["recent_days"]
    assert len(days) == 30 and days == sorted(days, key=lambda d: d["day"])
    assert (days[-1]["stored"], days[-1]["sessions"]) == (3, 1)
    assert days[-3]["stored"] == 1
    assert sum(d["stored"] for d in days) == 4  # the one stored 40 days ago is older
    one = (await api.get("/stats", params={"source_repo": "acme/web"})).json()
    assert one["by_repository"] == [{"source_repo": "acme/web", "total": 1, "active": 1}]
    assert sum(d["sessions"] for d in one["recent_days"]) == 0


async def test_metrics_are_prometheus_text(api: httpx.AsyncClient) -> None:
    await store(api, "counted memory")
    await api.get("/search", params={"q": "counted"})
    await api.post("/prune")
    text = (await api.get("/metrics")).text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name in (
        "agent_memory_http_requests",
        "agent_memory_http_request_duration_seconds",
        "agent_memory_store_outcomes",
        "agent_memory_search_results",
        "agent_memory_prune_runs",
        "agent_memory_pruned_memories",
        "agent_memory_embedding_duration_seconds",
        "agent_memory_db_pool_connections",
    ):
        assert name in families, name
    routes = {s.labels.get("route") for s in families["agent_memory_http_requests"].samples}
    assert {"/memories", "/search", "/prune"} <= routes
    # Where the store's time went, by phase (bench.store_phases reads these).
    phases = {
        s.labels["phase"]: s.value
        for s in families["agent_memory_store_phase_seconds"].samples
        if s.name.endswith("_total")
    }
    assert set(phases) == set(STORE_PHASES)
    assert all(seconds > 0 for seconds in phases.values()), phases


async def test_structured_logs_for_store_search_and_prune(
    api: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agent_memory")
    await store(api, "logged memory about structured logging")
    await api.get("/search", params={"q": "structured logging " + "x" * 200, "alpha": 0.5})
    await api.post("/prune")
    records = {r.getMessage(): r for r in caplog.records if r.name.startswith("agent_memory")}
    assert records["store"].status == "stored"  # type: ignore[attr-defined]
    search = records["search"]
    assert len(search.query) == 100  # type: ignore[attr-defined]
    assert search.alpha == 0.5  # type: ignore[attr-defined]
    assert search.keyword_candidates >= 1 and search.vector_candidates >= 1  # type: ignore[attr-defined]
    assert search.took_ms > 0  # type: ignore[attr-defined]
    assert records["prune"].total == 0  # type: ignore[attr-defined]
    # One JSON object per line.
    line = JsonFormatter().format(search)
    assert json.loads(line)["event"] == "search"


async def test_if_match_lets_one_of_two_concurrent_edits_win(api: httpx.AsyncClient) -> None:
    memory = await store(api, "Versioned memory")
    read = await api.get(f"/memories/{memory['id']}")
    tag = read.headers["etag"]
    assert tag == '"v1"' and read.json()["version"] == 1

    first, second = await asyncio.gather(
        api.patch(f"/memories/{memory['id']}", json={"tags": ["one"]}, headers={"If-Match": tag}),
        api.patch(f"/memories/{memory['id']}", json={"tags": ["two"]}, headers={"If-Match": tag}),
    )
    assert sorted((first.status_code, second.status_code)) == [200, 412]
    winner = first if first.status_code == 200 else second
    assert winner.headers["etag"] == '"v2"'
    loser = second if winner is first else first
    assert loser.json()["title"] == "Precondition Failed"
    current = (await api.get(f"/memories/{memory['id']}")).json()
    assert current["tags"] == winner.json()["tags"]

    stale = await api.post(
        f"/memories/{memory['id']}/supersede",
        json={"content": "Versioned memory, revised", "source_repo": None},
        headers={"If-Match": tag},
    )
    assert stale.status_code == 412
    fresh = await api.post(
        f"/memories/{memory['id']}/supersede",
        json={"content": "Versioned memory, revised", "source_repo": None},
        headers={"If-Match": winner.headers["etag"]},
    )
    assert fresh.status_code == 201
    bad = await api.patch(f"/memories/{memory['id']}", json={}, headers={"If-Match": "nope"})
    assert bad.status_code == 422
