"""Keys, roles, tenants, row-level security: one tenant never sees another's memories."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from typing import Any

import asyncpg
import httpx
import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from app.config import Settings
from app.db.pool import prepare_session
from app.db.unit_of_work import set_local
from app.domain.errors import RateLimitedError
from app.embeddings.base import Embedder
from app.main import create_app
from app.services.auth import RateLimiter
from tests.conftest import running

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_keys_are_required_once_any_exists(
    api: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    missing = await api.get("/memories")
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert (await api.get("/memories", headers=auth("am_not-a-key"))).status_code == 401
    assert (await api.get("/memories", headers={"Authorization": "Basic abc"})).status_code == 401
    in_url = await api.get("/memories", params={"api_key": keys["a-admin"]})
    assert in_url.status_code == 401
    assert "never in the URL" in in_url.json()["detail"]
    ok = await api.get("/memories", headers=auth(keys["a-admin"]))
    assert ok.status_code == 200
    # Health and metrics stay open for probes and scrapers.
    assert (await api.get("/healthz")).status_code == 200


async def test_keys_are_stored_hashed_and_revocation_is_immediate(
    api: httpx.AsyncClient, db: asyncpg.Connection, keys: dict[str, str]
) -> None:
    hashes = {r["key_hash"] for r in await db.fetch("SELECT key_hash FROM api_keys")}
    assert hashlib.sha256(keys["a-agent"].encode()).hexdigest() in hashes
    assert keys["a-agent"] not in hashes
    admin = auth(keys["a-admin"])
    listed = (await api.get("/admin/keys", headers=admin)).json()
    assert {k["tenant_id"] for k in listed} == {"a"}  # own tenant only
    assert all("key" not in k for k in listed)
    agent_id = next(k["id"] for k in listed if k["role"] == "agent")
    assert (await api.get("/memories", headers=auth(keys["a-agent"]))).status_code == 200
    assert (await api.delete(f"/admin/keys/{agent_id}", headers=admin)).status_code == 200
    assert (await api.get("/memories", headers=auth(keys["a-agent"]))).status_code == 401
    created = await api.post("/admin/keys", headers=admin, json={"name": "ci", "role": "reader"})
    assert created.status_code == 201
    assert (
        await api.get("/search", params={"q": "x"}, headers=auth(created.json()["key"]))
    ).status_code == 200


async def test_roles(api: httpx.AsyncClient, keys: dict[str, str]) -> None:
    agent, reader, admin = (auth(keys[f"a-{r}"]) for r in ("agent", "reader", "admin"))
    stored = await api.post(
        "/memories", headers=agent, json={"content": "agent wrote this", "source_repo": None}
    )
    assert stored.status_code == 201
    memory_id = stored.json()["memory"]["id"]
    assert (
        await api.post("/memories", headers=reader, json={"content": "no", "source_repo": None})
    ).status_code == 403
    assert (await api.get("/search", params={"q": "agent"}, headers=reader)).status_code == 200
    assert (await api.get("/stats", headers=reader)).status_code == 200
    assert (await api.get("/stats", headers=agent)).status_code == 403
    assert (await api.post("/prune", headers=agent)).status_code == 403
    assert (await api.delete(f"/memories/{memory_id}", headers=agent)).status_code == 403
    assert (
        await api.post("/admin/keys", headers=agent, json={"name": "x", "role": "admin"})
    ).status_code == 403
    assert (await api.post("/prune", headers=admin)).status_code == 200
    # An agent cannot speak for a person or the operator.
    user_trust = await api.post(
        "/memories",
        headers=agent,
        json={"content": "trust me", "trust_level": "user", "source_repo": None},
    )
    assert user_trust.status_code == 403
    assert user_trust.json()["errors"][0]["field"] == "trust_level"
    by_admin = await api.post(
        "/memories",
        headers=admin,
        json={"content": "ops rule", "trust_level": "system", "source_repo": None},
    )
    assert by_admin.status_code == 201
    # Provenance: the key that wrote it.
    assert stored.json()["memory"]["created_by_key"] is not None


async def test_one_tenant_cannot_reach_anothers_memories(
    api: httpx.AsyncClient, db: asyncpg.Connection, keys: dict[str, str]
) -> None:
    a, b = auth(keys["a-admin"]), auth(keys["b-admin"])
    secret = "Tenant A's deploy key lives in vault path secret/a/deploy"
    stored = (
        await api.post("/memories", headers=a, json={"content": secret, "source_repo": "r"})
    ).json()
    memory_id = stored["memory"]["id"]
    session = (await api.post("/sessions", headers=a, json={"source_repo": "r"})).json()

    foreign = [
        await api.get(f"/memories/{memory_id}", headers=b),
        await api.delete(f"/memories/{memory_id}", headers=b),
        await api.post(f"/memories/{memory_id}/restore", headers=b),
        await api.post(
            f"/memories/{memory_id}/supersede",
            headers=b,
            json={"content": "hijack", "source_repo": None},
        ),
        await api.post(f"/memories/{memory_id}/feedback", headers=b, json={"outcome": "unhelpful"}),
        await api.patch(f"/memories/{memory_id}", headers=b, json={"pinned": True}),
        await api.post(
            f"/sessions/{session['session_id']}/end", headers=b, json={"status": "failed"}
        ),
    ]
    missing_id = str(uuid.uuid4())
    for response in foreign:
        assert response.status_code == 404, response.request.url
    # ... and exactly like a missing id.
    assert (await api.get(f"/memories/{missing_id}", headers=b)).json()["detail"] == (
        f"memory {missing_id} not found"
    )
    assert (await api.get("/search", params={"q": "deploy key vault"}, headers=b)).json()[
        "results"
    ] == []
    assert (await api.get("/memories", headers=b)).json()["memories"] == []
    assert (await api.get("/stats", headers=b)).json()["total"] == 0
    assert secret not in (await api.get("/snapshot", headers=b)).text
    # A's standing memories and the rules its files wrote are A's alone.
    decided = {"content": "A deploys on Tuesdays only.", "memory_type": "decision",
               "source_repo": "r"}  # fmt: skip
    assert (await api.post("/memories", headers=a, json=decided)).status_code == 201
    standing = await api.get("/standing", params={"source_repo": "r"}, headers=b)
    assert standing.status_code == 200 and standing.json()["memory_ids"] == []
    rule = {"kind": "instruction", "text": "Never deploy on Fridays, ever.", "source_repo": "r",
            "client": "file", "client_session": "CLAUDE.md", "key": "rule|k"}  # fmt: skip
    (draft_id,) = (await api.post("/drafts", headers=a, json={"drafts": [rule]})).json()["queued"]
    assert (await api.post(f"/drafts/{draft_id}/keep", headers=a)).status_code == 201
    weighed = await api.post("/drafts/written", headers=b, json={"source_repo": "r", "keys": []})
    assert (weighed.json()["unwritten"], weighed.json()["proposed"]) == (0, 0)
    # The same content from B is B's own memory: A's is not reinforced.
    mine = await api.post("/memories", headers=b, json={"content": secret, "source_repo": "r"})
    assert mine.status_code == 201
    row = await db.fetchrow(
        "SELECT observation_count, pinned, superseded_by FROM memories WHERE id = $1",
        uuid.UUID(memory_id),
    )
    assert (row["observation_count"], row["pinned"], row["superseded_by"]) == (1, False, None)
    assert (await api.get(f"/memories/{memory_id}", headers=a)).status_code == 200


async def test_mcp_tools_act_for_the_keys_tenant(
    api: httpx.AsyncClient, keys: dict[str, str], mcp_served: str
) -> None:
    await api.post(
        "/memories",
        headers=auth(keys["a-admin"]),
        json={"content": "only for tenant a", "source_repo": None},
    )
    async with httpx.AsyncClient(timeout=30) as plain:
        unauthenticated = await plain.post(f"{mcp_served}/mcp", json={})
    assert unauthenticated.status_code == 401
    b_client = httpx2.AsyncClient(headers=auth(keys["b-admin"]), timeout=30)
    transport = streamable_http_client(f"{mcp_served}/mcp", http_client=b_client)
    async with b_client, Client(transport) as client:
        found = await client.call_tool("search_memories", {"query": "only for tenant a"})
        assert found.content[0].text.startswith("0 result(s)")  # type: ignore[union-attr]


async def test_concurrent_requests_of_two_tenants_never_mix(
    settings: Settings,
    embedder: Embedder,
    database_url: str,
    db: asyncpg.Connection,
    keys: dict[str, str],
) -> None:
    small = Settings(**{**settings.model_dump(), "db_pool_min": 1, "db_pool_max": 3})
    application = create_app(small, embedder=embedder, database_url=database_url)
    async with running(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            for tenant in ("a", "b"):
                for i in range(5):
                    await client.post(
                        "/memories",
                        headers=auth(keys[f"{tenant}-agent"]),
                        json={
                            "content": f"shared topic note {i} of tenant {tenant}",
                            "source_repo": None,
                        },
                    )

            async def one(i: int) -> tuple[str, list[str]]:
                tenant = "ab"[i % 2]
                response = await client.get(
                    "/search",
                    params={"q": "shared topic note", "limit": 20},
                    headers=auth(keys[f"{tenant}-reader"]),
                )
                assert response.status_code == 200, response.text
                return tenant, [r["memory"]["tenant_id"] for r in response.json()["results"]]

            results = await asyncio.gather(*(one(i) for i in range(200)))
            pool = application.state.runtime.database.pool
            assert pool.get_size() <= 3
    foreign = sum(1 for tenant, seen in results for t in seen if t != tenant)
    assert foreign == 0
    assert all(len(seen) == 5 for _, seen in results)
    idle = await db.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'"
        " AND datname = current_database()"
    )
    assert idle == 0


async def test_rate_limit_per_key(
    api: httpx.AsyncClient, app: FastAPI, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    limiter = app.state.runtime.authenticator._limiter
    monkeypatch.setattr(limiter, "per_minute", 3)
    monkeypatch.setattr(limiter, "_windows", {})
    statuses = [
        (await api.get("/memories", headers=auth(keys["a-reader"]))).status_code for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]
    limited = await api.get("/memories", headers=auth(keys["a-reader"]))
    assert 0 < int(limited.headers["retry-after"]) <= 60
    # Another key has its own budget.
    assert (await api.get("/memories", headers=auth(keys["a-agent"]))).status_code == 200


def test_rate_limiter_windows() -> None:
    limiter = RateLimiter(2)
    key = uuid.uuid4()
    limiter.check(key, now=60.0)
    limiter.check(key, now=61.0)
    with pytest.raises(RateLimitedError):
        limiter.check(key, now=119.0)
    limiter.check(key, now=120.0)  # a new minute


async def test_row_level_security_catalog_and_no_tenant(
    api: httpx.AsyncClient, database_url: str, db: asyncpg.Connection
) -> None:
    tables = await db.fetch(
        "SELECT relname, relrowsecurity, relforcerowsecurity, pg_get_userbyid(relowner) AS owner"
        " FROM pg_class"
        " WHERE relname IN ('memories', 'memory_access', 'sessions', 'drafts', 'proposals')"
    )
    assert {(t["relname"], t["relrowsecurity"], t["relforcerowsecurity"]) for t in tables} == {
        ("memories", True, True),
        ("memory_access", True, True),
        ("sessions", True, True),
        ("drafts", True, True),
        ("proposals", True, True),
    }
    role = await db.fetchrow(
        "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'agent_memory_app'"
    )
    assert (role["rolsuper"], role["rolbypassrls"]) == (False, False)
    assert all(t["owner"] != "agent_memory_app" for t in tables)

    await db.execute(
        "INSERT INTO memories (tenant_id, content, content_hash)"
        " VALUES ('a', 'visible to a', memory_content_hash('visible to a'))"
    )
    conn = await asyncpg.connect(database_url)
    try:
        await prepare_session(conn, ef_search=100)  # as the pool's: SET ROLE and more
        assert await conn.fetchval("SELECT count(*) FROM memories") == 0  # no tenant: nothing
        async with conn.transaction():
            await set_local(conn, {"app.tenant_id": "b"})
            assert await conn.fetchval("SELECT count(*) FROM memories") == 0
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute(
                    "INSERT INTO memories (tenant_id, content, content_hash)"
                    " VALUES ('a', 'planted', memory_content_hash('planted'))"
                )
        async with conn.transaction():
            await set_local(conn, {"app.tenant_id": "a"})
            assert await conn.fetchval("SELECT count(*) FROM memories") == 1
        # Nor can one tenant count reads of another's memory.
        memory_id = await db.fetchval("SELECT id FROM memories WHERE tenant_id = 'a'")
        async with conn.transaction():
            await set_local(conn, {"app.tenant_id": "b"})
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute(
                    "INSERT INTO memory_access (tenant_id, memory_id, access_count)"
                    " VALUES ('a', $1, 99)",
                    memory_id,
                )
    finally:
        await conn.close()


async def test_hot_queries_use_their_indexes_under_rls(
    api: httpx.AsyncClient, database_url: str, db: asyncpg.Connection
) -> None:
    await db.executemany(
        "INSERT INTO memories (tenant_id, content, content_hash, embedding)"
        " VALUES ($1, $2, memory_content_hash($2), $3)",
        [
            ("ab"[i % 2], f"memory number {i} about topic {i % 50}", [float(i % 7 + 1)] * 384)
            for i in range(4000)
        ],
    )
    await db.execute("ANALYZE memories")
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SET ROLE agent_memory_app")
        async with conn.transaction():
            await conn.execute("SELECT set_config('app.tenant_id', 'a', true)")
            by_id = await conn.fetch(
                "EXPLAIN SELECT * FROM memories WHERE tenant_id = 'a' AND id = $1", uuid.uuid4()
            )
            assert "memories_pkey" in "\n".join(r[0] for r in by_id)
            vector = await conn.fetch(
                "EXPLAIN SELECT id FROM memories WHERE tenant_id = 'a'"
                " ORDER BY embedding <=> $1 LIMIT 10",
                "[" + ",".join(["1"] * 384) + "]",
            )
            assert "memories_embedding_hnsw" in "\n".join(r[0] for r in vector)
            newest = await conn.fetch(
                "EXPLAIN SELECT id FROM memories m WHERE m.tenant_id = 'a'"
                " AND m.archived_at IS NULL AND m.superseded_by IS NULL"
                " ORDER BY m.created_at DESC, m.id DESC LIMIT 20"
            )
            assert "memories_recent_key" in "\n".join(r[0] for r in newest)
    finally:
        await conn.close()


async def test_keyword_postings_answer_only_for_the_transactions_tenant(
    api: httpx.AsyncClient, database_url: str, db: asyncpg.Connection
) -> None:
    """memory_keyword_postings() reads with owner rights (on Citus, on the tenant's worker):
    it answers for the transaction's own tenant only, whichever tenant it is asked about,
    and never with another tenant's memories."""
    await db.executemany(
        "INSERT INTO memories (tenant_id, content, content_hash, source_repo)"
        " VALUES ($1, $2, memory_content_hash($2), NULL)",
        [(tenant, f"{tenant} keeps a zebra note {i}") for tenant in "ab" for i in range(3)],
    )
    # As the search sends it (on Citus, the form Citus delegates to the tenant's worker).
    ask = "SELECT memory_keyword_postings($1, 'zebra crossing', 100, NULL::memory_filter, false)"
    owners = "SELECT tenant_id FROM memories WHERE id = ANY($1::uuid[])"
    conn = await asyncpg.connect(database_url)
    try:
        await prepare_session(conn, ef_search=40)
        assert await conn.fetchval(ask, "a") == {}  # no tenant set: nothing
        async with conn.transaction():
            await set_local(conn, {"app.tenant_id": "a"})
            answered = await conn.fetchval(ask, "a")
            assert await conn.fetchval(ask, "b") == {}  # another tenant, named: nothing
        own = answered["zebra"]
        assert len(own) == 3 and answered["cross"] == []
        assert {r["tenant_id"] for r in await db.fetch(owners, own)} == {"a"}
    finally:
        await conn.close()


@pytest.mark.single_node
async def test_keyword_index_path_enforces_the_tenant_and_uses_the_gin_index(
    api: httpx.AsyncClient, database_url: str, db: asyncpg.Connection
) -> None:
    """Row-level security keeps `@@` (not leakproof) out of index conditions, so the keyword
    side reads the GIN index through memory_keyword_postings(), which checks the tenant
    itself: it answers for the transaction's own tenant, and nobody else."""
    await db.executemany(
        "INSERT INTO memories (tenant_id, content, content_hash, source_repo)"
        " VALUES ($1, $2, memory_content_hash($2), $3)",
        [
            (
                "ab"[i % 2],
                f"note {i} about zebra crossings" if i % 100 == 0 else f"note {i}",
                f"acme/repo-{i % 20}",
            )
            for i in range(4000)
        ],
    )
    await db.execute("ANALYZE memories")
    call = (
        "SELECT coalesce(jsonb_array_length(memory_keyword_postings("
        "'a', 'zebra', 1000, NULL::memory_filter, false) -> 'zebra'), 0)"
    )
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SET ROLE agent_memory_app")
        assert await conn.fetchval(call) == 0  # no tenant set: nothing
        async with conn.transaction():
            await conn.execute("SELECT set_config('app.tenant_id', 'a', true)")
            assert await conn.fetchval(call) == 40
            for repo, hits in (("acme/repo-0", 40), ("acme/repo-1", 0)):
                scoped_call = call.replace(
                    "NULL::memory_filter",
                    f"""jsonb_populate_record(NULL::memory_filter, '{{"repo": "{repo}"}}')""",
                )
                assert await conn.fetchval(scoped_call) == hits
        async with conn.transaction():
            await conn.execute("SELECT set_config('app.tenant_id', 'c', true)")
            assert await conn.fetchval(call) == 0
    finally:
        await conn.close()
    # The function runs with its owner's rights; as the owner, its queries use the GIN
    # index, with the repository inside the index condition when there is one.
    query = (
        "EXPLAIN SELECT m.id FROM memories m"
        " WHERE m.tenant_id = current_setting('app.tenant_id', true){}"
        " AND m.search_vector @@ 'zebra'::tsquery LIMIT 1000"
    )
    async with db.transaction():
        await db.execute("SELECT set_config('app.tenant_id', 'a', true)")
        plan = "\n".join(r[0] for r in await db.fetch(query.format("")))
        scoped = "\n".join(
            r[0] for r in await db.fetch(query.format(" AND m.source_repo = 'acme/repo-0'"))
        )
    assert "Bitmap Index Scan on memories_keyword_key" in plan
    assert "search_vector @@" in plan.split("Bitmap Index Scan")[1]
    scoped_condition = scoped.split("Bitmap Index Scan on memories_keyword_key")[1]
    assert "source_repo =" in scoped_condition and "search_vector @@" in scoped_condition


async def test_small_tenant_gets_full_results_and_its_true_best_match_from_hnsw(
    api: httpx.AsyncClient, app: FastAPI, db: asyncpg.Connection
) -> None:
    """A tenant holding 1% of 3,000 rows: the filtered HNSW path still fills `limit`."""
    import numpy as np

    from app.db.unit_of_work import unit_of_work
    from app.domain.filters import MemoryFilter
    from app.repository.search import SearchRepository
    from app.repository.search_statement import SearchParams

    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(3000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    tenant_of = ["small" if i % 100 == 0 else "big" for i in range(3000)]
    await db.executemany(
        "INSERT INTO memories (tenant_id, content, content_hash, embedding)"
        " VALUES ($1, $2, memory_content_hash($2), $3)",
        [(tenant_of[i], f"row {i}", vectors[i]) for i in range(3000)],
    )
    await db.execute("ANALYZE memories")
    small = [i for i in range(3000) if tenant_of[i] == "small"]
    query = vectors[small[:2]].mean(axis=0)
    query /= np.linalg.norm(query)
    best = max(small, key=lambda i: float(vectors[i] @ query))
    params = SearchParams("", list(query), 1.0, 10, 200, 200, 0.0, 30.0, False)
    async with unit_of_work(app.state.runtime.database, "small") as uow:
        outcome = await SearchRepository(uow).search(MemoryFilter(), params)
    found = [hit.memory.content for hit in outcome.hits]
    assert len(found) == 10
    assert found[0] == f"row {best}"
    assert all(hit.memory.tenant_id == "small" for hit in outcome.hits)


async def test_every_mcp_tool_stays_in_the_keys_tenant(
    api: httpx.AsyncClient, db: asyncpg.Connection, keys: dict[str, str], mcp_served: str
) -> None:
    a = auth(keys["a-admin"])
    secret = "Tenant A plans to migrate billing to Stripe in March"
    await api.post("/memories", headers=a, json={"content": secret, "source_repo": "r"})
    stale = (
        await api.post(
            "/memories", headers=a, json={"content": "A's stale note", "source_repo": None}
        )
    ).json()
    await db.execute(
        "UPDATE memories SET created_at = now() - interval '200 days' WHERE id = $1",
        uuid.UUID(stale["memory"]["id"]),
    )
    await api.post(
        "/strategies/learn",
        headers=auth(keys["a-agent"]),
        json={
            "task_description": "Create a database migration",
            "plan_summary": "1. write it",
            "attempt_history": [{"step_index": 0, "result": "success"}],
            "total_attempts": 1,
            "quality_score": 9,
            "source_repo": "r",
        },
    )
    a_session = (await api.post("/sessions", headers=a, json={"source_repo": "r"})).json()

    async def call(key: str, tool: str, arguments: dict[str, Any]) -> Any:
        client_http = httpx2.AsyncClient(headers=auth(key), timeout=30)
        transport = streamable_http_client(f"{mcp_served}/mcp", http_client=client_http)
        async with client_http, Client(transport) as client:
            return await client.call_tool(tool, arguments)

    b = keys["b-admin"]
    found = await call(b, "search_memories", {"query": "billing Stripe migration"})
    assert found.content[0].text.startswith("0 result(s)")
    hint = await call(b, "get_strategy_hint", {"task": "database migration", "source_repo": "r"})
    assert hint.structured_content["hint"] == ""
    snapshot = await call(b, "snapshot", {"source_repo": "r"})
    assert "Stripe" not in snapshot.content[0].text
    ended = await call(
        b, "end_session", {"session_id": a_session["session_id"], "status": "failed"}
    )
    assert ended.is_error and "not found" in ended.content[0].text
    pruned = await call(b, "run_pruning", {})
    assert pruned.structured_content["total_archived"] == 0
    stats = await call(b, "get_access_stats", {})
    assert stats.structured_content["total"] == 0
    stored = await call(b, "store_memory", {"content": secret, "source_repo": "r"})
    assert stored.structured_content["status"] == "stored"  # B's own row, A's not reinforced
    remembered = await call(
        b, "remember", {"text": "Tenant B keeps its own learnings apart", "source_repo": "r"}
    )
    assert remembered.structured_content["status"] == "stored"
    rows = await db.fetch(
        "SELECT tenant_id, observation_count, archived_at FROM memories"
        " WHERE content = $1 OR content = 'A''s stale note'",
        secret,
    )
    assert sorted((r["tenant_id"], r["observation_count"]) for r in rows) == [
        ("a", 1),
        ("a", 1),
        ("b", 1),
    ]
    assert all(r["archived_at"] is None for r in rows)
    # Roles hold over MCP too.
    denied = await call(
        keys["a-reader"], "store_memory", {"content": "readers cannot write", "source_repo": None}
    )
    assert denied.is_error and "reader" in denied.content[0].text
