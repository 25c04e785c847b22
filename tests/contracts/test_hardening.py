"""What an attacker with one ordinary key tried, each answered: idempotency that cannot be
poisoned, trust that cannot be undone from below, inputs that once answered 500, and cost
bounds (body size, message size, diff time, query terms, statement time, pool share)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
from pathlib import Path
from typing import Any
from uuid import UUID

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.config import LIMITS
from app.db.unit_of_work import UnitOfWork
from app.domain.errors import OverloadedError, RateLimitedError
from app.domain.validation import FIELD_CHARS
from app.services.auth import RateLimiter
from app.services.keys import KeyService
from tests.server import free_port, launch, start_server, stdio_server, wait_until_ready


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
async def keys(api: httpx.AsyncClient, db: asyncpg.Connection) -> dict[str, str]:
    service = KeyService.on_connection(db)
    return {
        name: (await service.create("t", name, role)).key
        for name, role in (
            ("agent", "agent"),
            ("agent2", "agent"),
            ("reader", "reader"),
            ("admin", "admin"),
        )
    }


class SwitchableLimiter(RateLimiter):
    """Counts every check; refuses while `limited` is set."""

    def __init__(self) -> None:
        super().__init__(0)
        self.checks = 0
        self.limited = False

    def check(self, key_id: UUID, now: float | None = None) -> None:
        self.checks += 1
        if self.limited:
            raise RateLimitedError("slow down", retry_after_s=1)


async def test_a_refusal_by_rate_or_role_is_not_kept_for_replay_and_auth_counts_once(
    api: httpx.AsyncClient,
    app: FastAPI,
    keys: dict[str, str],
    db: asyncpg.Connection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limiter = SwitchableLimiter()
    monkeypatch.setattr(app.state.runtime.authenticator, "_limiter", limiter)
    body = {"content": "written once the limit has passed", "source_repo": None}
    headers = {"Idempotency-Key": "k1", **auth(keys["agent"])}

    limiter.limited = True
    assert (await api.post("/memories", json=body, headers=headers)).status_code == 429
    limiter.limited = False
    stored = await api.post("/memories", json=body, headers=headers)
    assert stored.status_code == 201
    assert "idempotent-replayed" not in stored.headers
    assert limiter.checks == 2  # one authentication per request, idempotent or not

    # A reader's 403 under a key does not block an agent's write under the same key.
    other = {"content": "an agent's note after a reader tried", "source_repo": None}
    reader = await api.post(
        "/memories", json=other, headers={"Idempotency-Key": "k2", **auth(keys["reader"])}
    )
    assert reader.status_code == 403
    agent = await api.post(
        "/memories", json=other, headers={"Idempotency-Key": "k2", **auth(keys["agent"])}
    )
    assert agent.status_code == 201
    assert await db.fetchval("SELECT count(*) FROM memories") == 2


async def test_a_replay_is_bound_to_the_key_that_made_it(
    api: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    body = {"content": "a note two agents of one team both send", "source_repo": None}
    first = await api.post(
        "/memories", json=body, headers={"Idempotency-Key": "same", **auth(keys["agent"])}
    )
    replay = await api.post(
        "/memories", json=body, headers={"Idempotency-Key": "same", **auth(keys["agent"])}
    )
    assert replay.headers["idempotent-replayed"] == "true"
    second = await api.post(
        "/memories", json=body, headers={"Idempotency-Key": "same", **auth(keys["agent2"])}
    )
    # The second key's request runs: it reinforces, and is nobody's replay.
    assert (first.status_code, second.status_code) == (201, 200)
    assert "idempotent-replayed" not in second.headers
    assert second.json()["memory"]["observation_count"] == 2


@pytest.mark.parametrize("trust", ["system", "user"])
async def test_an_agent_key_cannot_undo_what_it_could_not_write(
    api: httpx.AsyncClient, keys: dict[str, str], db: asyncpg.Connection, trust: str
) -> None:
    admin, agent = auth(keys["admin"]), auth(keys["agent"])
    pinned = await api.post(
        "/memories",
        json={
            "content": f"Never deploy on Fridays ({trust})",
            "trust_level": trust,
            "pinned": True,
            "source_repo": None,
        },
        headers=admin,
    )
    memory_id = pinned.json()["memory"]["id"]
    for change in ({"pinned": False}, {"metadata": {"note": "overruled"}}, {"tags": ["x"]}):
        refused = await api.patch(f"/memories/{memory_id}", json=change, headers=agent)
        assert refused.status_code == 403, change
        assert refused.json()["errors"][0]["field"] == "trust_level"
    replaced = await api.post(
        f"/memories/{memory_id}/supersede",
        json={"content": "Deploy whenever", "trust_level": "agent", "source_repo": None},
        headers=agent,
    )
    assert replaced.status_code == 403
    row = await db.fetchrow(
        "SELECT pinned, version, superseded_by FROM memories WHERE id = $1", UUID(memory_id)
    )
    assert (row["pinned"], row["version"], row["superseded_by"]) == (True, 1, None)
    assert await db.fetchval("SELECT count(*) FROM memories") == 1
    # The admin still may, and an agent may edit what an agent wrote.
    assert (
        await api.patch(f"/memories/{memory_id}", json={"pinned": False}, headers=admin)
    ).status_code == 200
    own = await api.post(
        "/memories", json={"content": "an agent's own note", "source_repo": None}, headers=agent
    )
    edited = await api.patch(
        f"/memories/{own.json()['memory']['id']}", json={"tags": ["mine"]}, headers=agent
    )
    assert edited.status_code == 200


@pytest.mark.parametrize("tag", ['"v²"', '"v' + "9" * 5000 + '"', '"v99999999999"', '"w1"'])
async def test_malformed_if_match_is_422_not_500(api: httpx.AsyncClient, tag: str) -> None:
    stored = await api.post("/memories", json={"content": "versioned", "source_repo": None})
    memory_id = stored.json()["memory"]["id"]
    response = await api.patch(
        f"/memories/{memory_id}", json={"tags": []}, headers=[(b"If-Match", tag.encode())]
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "If-Match"


async def test_a_body_over_the_limit_is_refused_before_it_is_read(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch, db: asyncpg.Connection
) -> None:
    limit = app.state.runtime.settings.max_body_bytes
    declared = await api.post(
        "/memories",
        content=b"{}",
        headers={"content-type": "application/json", "content-length": str(limit + 1)},
    )
    assert declared.status_code == 413
    assert declared.headers["content-type"] == "application/problem+json"

    async def chunks() -> Any:
        yield b'{"content": "'
        for _ in range(limit // 65536 + 2):
            yield b"x" * 65536
        yield b'"}'

    for path in ("/memories", "/mcp"):
        streamed = await api.post(
            path, content=chunks(), headers={"content-type": "application/json"}
        )
        assert streamed.status_code == 413, path
    assert await db.fetchval("SELECT count(*) FROM memories") == 0


async def spawn_stdio(database_url: str, **env: str) -> asyncio.subprocess.Process:
    params = stdio_server(database_url, **env)
    return await asyncio.create_subprocess_exec(
        params.command,
        *params.args,
        env=params.env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_stdio_without_a_valid_key_says_so_in_one_line(
    database_url: str, db: asyncpg.Connection
) -> None:
    await KeyService.on_connection(db).create("t", "exists", "agent")
    for env in ({}, {"AGENT_MEMORY_API_KEY": "am_wrong"}):
        process = await spawn_stdio(database_url, **env)
        _, err = await asyncio.wait_for(process.communicate(b""), 60)
        assert process.returncode == 2
        lines = err.decode().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("agent-memory mcp: "), lines
        assert "Traceback" not in err.decode()
    await db.execute("TRUNCATE api_keys CASCADE")


async def test_stdio_refuses_a_message_over_the_line_limit_and_keeps_serving(
    database_url: str, db: asyncpg.Connection
) -> None:
    process = await spawn_stdio(database_url, MAX_BODY_BYTES="65536")
    assert process.stdin is not None and process.stdout is not None

    async def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(message).encode() + b"\n")
        await process.stdin.drain()

    async def answer() -> dict[str, Any]:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        reply: dict[str, Any] = json.loads(line)
        return reply

    try:
        await send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert (await answer())["id"] == 1
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        huge = {"content": "x" * 200_000, "source_repo": None}
        await send(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "store_memory", "arguments": huge}}
        )  # fmt: skip
        refused = await answer()
        assert refused["id"] == 2 and "error" in refused
        await send(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "store_memory",
                        "arguments": {"content": "small", "source_repo": None}}}
        )  # fmt: skip
        served = await answer()
        assert served["id"] == 3 and not served["result"]["isError"]
        assert await db.fetchval("SELECT array_agg(content) FROM memories") == ["small"]
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 60)
        await db.execute("TRUNCATE memories, memory_access")


async def test_a_worst_case_retry_diff_leaves_the_event_loop_serving(
    api: httpx.AsyncClient,
) -> None:
    # Lines of a few repeated values, difflib's worst case (docs/benchmarks.md, "The retry
    # diff").
    before = "\n".join(f"line {i % 7}" for i in range(8_000))
    after = "\n".join(f"line {(i * 3) % 11}" for i in range(8_000))
    files = [{"path": f"f{n}.py", "content": after} for n in range(4)]
    previous = [{"path": f"f{n}.py", "content": before} for n in range(4)]
    retry = asyncio.create_task(
        api.post(
            "/retry-context",
            json={"task_description": "t", "current_files": files, "previous_files": previous},
        )
    )
    # Health checks answered while the diff runs: none if it held the event loop. A count,
    # not a latency, so that a busy machine cannot fail it.
    answered = 0
    while not retry.done():
        await asyncio.sleep(0)  # in-process, a health check may never suspend by itself
        assert (await api.get("/healthz")).status_code == 200
        answered += not retry.done()
    response = await retry
    assert response.status_code == 200
    assert answered >= 2
    assert response.json()["changed_files"][0]["diff"].count("\n") >= 10


async def test_a_long_query_is_cut_to_its_first_distinct_words(api: httpx.AsyncClient) -> None:
    await api.post("/memories", json={"content": "w5 appears in this memory", "source_repo": None})
    query = " ".join(f"w{i}" for i in range(300))  # 300 distinct words in 1,490 characters
    response = await api.post("/search", json={"q": query, "alpha": 0})
    assert response.status_code == 200
    body = response.json()
    assert "268 more were left out" in body["truncated"]
    assert body["results"][0]["memory"]["content"] == "w5 appears in this memory"


async def test_a_search_past_its_statement_timeout_is_503_and_changes_nothing(
    api: httpx.AsyncClient, app: FastAPI, db: asyncpg.Connection, database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    await api.post("/memories", json={"content": "behind a lock", "source_repo": None})
    monkeypatch.setattr(app.state.runtime.settings, "search_timeout_ms", 200)
    blocker = await asyncpg.connect(database_url)
    try:
        async with blocker.transaction():
            await blocker.execute("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
            response = await api.get("/search", params={"q": "lock", "alpha": 0})
        assert response.status_code == 503
        assert response.headers["retry-after"]
        assert "longer than 200 ms" in response.json()["detail"]
    finally:
        await blocker.close()
    assert await db.fetchval("SELECT count(*) FROM memory_access") == 0  # nothing counted


async def test_one_tenant_cannot_hold_every_connection(
    app: FastAPI, api: httpx.AsyncClient
) -> None:
    database = app.state.runtime.database
    share = database.shares.per_tenant
    assert share < database.pool.get_max_size()
    held = [UnitOfWork(database, "noisy") for _ in range(share)]
    try:
        for uow in held:
            await uow.connection()
        with pytest.raises(OverloadedError):
            extra = UnitOfWork(database, "noisy")
            original = database.acquire_timeout_s
            database.acquire_timeout_s = 0.2
            try:
                await extra.connection()
            finally:
                database.acquire_timeout_s = original
        # Another tenant is served from what is left.
        assert (
            await api.post("/memories", json={"content": "quiet tenant", "source_repo": None})
        ).status_code == 201
    finally:
        for uow in held:
            await uow.rollback()
            await uow.release()


async def test_a_flooding_tenant_yields_and_a_quiet_tenants_stores_keep_working(
    app: FastAPI,
    api: httpx.AsyncClient,
    keys: dict[str, str],
    db: asyncpg.Connection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    noisy = (await KeyService.on_connection(db).create("noisy", "reader", "reader")).key
    words = " ".join(f"term{i}x" for i in range(300))[:2000]
    admission = app.state.runtime.admission
    assert admission.backlog_duty > 0  # on by default
    # How many of the noisy tenant's requests were running as each of them was admitted,
    # while the quiet tenant was being served.
    running_when_admitted: list[int] = []
    several_admitted = asyncio.Event()
    # More than its limit lets run at once: the noisy tenant is backlogged.
    flood = admission.per_tenant + 4
    arrived = 0
    all_arrived = asyncio.Event()
    acquire = admission.acquire

    async def recorded(tenant_id: str, timeout_s: float) -> bool:
        nonlocal arrived
        if tenant_id == "noisy":
            arrived += 1
            if arrived == flood:
                all_arrived.set()  # it waits for a slot before the test looks
        # However slow a busy machine makes each search, and so each pause after one, the
        # flood waits long enough for three of its requests to be admitted.
        admitted: bool = await acquire(tenant_id, max(timeout_s, 300.0))
        if admitted and tenant_id == "noisy" and not several_admitted.is_set():
            running_when_admitted.append(admission.admitted("noisy"))
            if len(running_when_admitted) == 3:
                several_admitted.set()
        return admitted

    monkeypatch.setattr(admission, "acquire", recorded)

    async def worst_search() -> int:
        response = await api.post("/search", json={"q": words}, headers=auth(noisy))
        return response.status_code

    async def store(i: int) -> int:
        response = await api.post(
            "/memories",
            json={"content": f"quiet tenant note {i}", "source_repo": None},
            headers=auth(keys["agent"]),
        )
        return response.status_code

    # The quiet tenant ("t") is being served throughout: a request of it holds a slot.
    assert await acquire("t", 60.0)
    # The noisy tenant's own slots are held until its whole flood has queued behind them,
    # so that it is backlogged however slowly the requests arrive.
    held = [await acquire("noisy", 60.0) for _ in range(admission.per_tenant)]
    assert all(held)
    searches = [asyncio.create_task(worst_search()) for _ in range(flood)]
    try:
        await asyncio.wait_for(all_arrived.wait(), 60)
        assert admission.queued("noisy") == flood
        for _ in held:
            admission.release("noisy")
        # One client of its own, one request after another: within its limit.
        assert [await store(i) for i in range(5)] == [201] * 5
        await asyncio.wait_for(several_admitted.wait(), 60)
    finally:
        admission.release("t")
    # Answered (or 503 where a busy machine's pool had no connection in time).
    assert set(await asyncio.gather(*searches)) <= {200, 503}
    # It yielded: one request at a time while the quiet tenant was served, never its limit.
    assert running_when_admitted == [1, 1, 1]


async def test_a_killed_server_does_not_stop_a_later_clean_shutdown(tmp_path: Path) -> None:
    process, _ = await launch(tmp_path)
    process.send_signal(signal.SIGKILL)
    await process.wait()
    # PostgreSQL outlives the killed server; the next one attaches to it.
    assert (tmp_path / "pgdata" / "postmaster.pid").exists()
    process, base = await launch(tmp_path)
    async with httpx.AsyncClient(base_url=base) as client:
        assert (await client.get("/readyz")).status_code == 200
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), 60) == 0
    # PostgreSQL removes its pid file only when it stops.
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists()


@pytest.mark.slow
async def test_a_start_after_a_crash_that_took_postgresql_with_it_comes_up_first_time(
    tmp_path: Path,
) -> None:
    """kill -9 of the service and of its PostgreSQL (an OOM kill, a container's forced
    stop), then an immediate start, five rounds: each start is ready on its first try
    (issue 50: the takeover trusted a postmaster that was gone, and exited 1)."""
    process, _ = await launch(tmp_path)
    for _round in range(5):
        postmaster = int((tmp_path / "pgdata" / "postmaster.pid").read_text().split()[0])
        process.send_signal(signal.SIGKILL)
        os.kill(postmaster, signal.SIGKILL)
        await process.wait()
        port = free_port()
        process = await start_server(tmp_path, port)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            await wait_until_ready(client, process, tmp_path)  # no second try
            assert (await client.get("/readyz")).status_code == 200
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), 60) == 0


def test_no_door_imports_another() -> None:
    """MCP must not lean on the REST package: rules and wiring live below both."""
    root = Path(__file__).parents[2] / "app"
    for source in (root / "mcp").glob("*.py"):
        assert "app.api" not in source.read_text(), source.name


def test_repositories_bind_by_name() -> None:
    """A statement's values are bound by name (app/repository/sql.py): no `$1` written by
    hand, where two values of one type could be swapped without an error. The functions'
    own SQL files bind their arguments as PostgreSQL does, and are not Python."""
    root = Path(__file__).parents[2] / "app" / "repository"
    positional = re.compile(r"\$\d")
    for source in root.glob("*.py"):
        assert not positional.search(source.read_text()), source.name


async def test_a_memory_at_every_size_limit_is_stored_and_found(
    api: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """Each field at its longest, in four-byte characters that do not compress: no index
    row may outgrow what PostgreSQL can hold (a b-tree row with the vector and such tags
    once answered 500)."""
    rng = random.Random(0)

    def wide(n: int) -> str:  # CJK Extension B: letters of four bytes in UTF-8
        return "".join(chr(rng.randrange(0x20000, 0x2A6D6)) for _ in range(n))

    repo = wide(FIELD_CHARS["source_repo"])
    memory = {
        "content": "a deploy decision with every field at its limit",
        "tags": [wide(LIMITS.max_tag_chars) for _ in range(LIMITS.max_tags)],
        "source_repo": repo,
    }
    stored = await api.post("/memories", json=memory, headers=auth(keys["agent"]))
    assert stored.status_code == 201, stored.text
    found = await api.get(
        "/search",
        params={"q": "deploy decision", "source_repo": repo},
        headers=auth(keys["agent"]),
    )
    found_ids = [hit["memory"]["id"] for hit in found.json()["results"]]
    assert found_ids == [stored.json()["memory"]["id"]]
