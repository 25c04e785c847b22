"""The embedded server: data survives a restart; an outage answers 503 and heals by itself."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from app.config import Settings
from app.db.embedded import EmbeddedPostgres, available_memory, shared_buffers_mb
from app.db.migrations import upgrade_head_async
from app.embeddings.base import Embedder
from app.embeddings.hashing import HashEmbedder
from app.main import create_app
from tests.doubles import GatedEmbedder


@asynccontextmanager
async def serving(url: str, embedder: Embedder | None = None) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(database_url=url, db_pool_min=1, db_pool_max=2, embedding_provider="hash")
    app = create_app(settings, embedder=embedder or HashEmbedder(384), database_url=url)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield client


def test_shared_buffers_are_a_quarter_of_the_memory_within_bounds() -> None:
    assert [shared_buffers_mb(gib * 2**30) for gib in (1, 4, 24, 64)] == [512, 1024, 6144, 8192]


async def test_memories_survive_a_restart_of_the_embedded_server(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path)
    url = await asyncio.to_thread(server.start)
    await upgrade_head_async(url)
    conn = await asyncpg.connect(url)
    try:
        # A new cluster is sized from the memory and keeps its buffers across restarts.
        settings = await conn.fetchrow(
            "SELECT current_setting('shared_preload_libraries') AS preload,"
            " (SELECT setting::bigint * 8 / 1024 FROM pg_settings"
            "   WHERE name = 'shared_buffers') AS shared_buffers_mb,"
            " current_setting('pg_prewarm.autoprewarm') AS autoprewarm"
        )
    finally:
        await conn.close()
    assert dict(settings) == {
        "preload": "pg_prewarm",
        "shared_buffers_mb": shared_buffers_mb(available_memory()),
        "autoprewarm": "on",
    }
    # Restarted once with those settings, the server still writes to its log.
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("DO $$ BEGIN RAISE LOG 'written after the settings restart'; END $$")
    finally:
        await conn.close()
    assert "written after the settings restart" in (server.pgdata / "log").read_text()
    async with serving(url) as client:
        stored = await client.post(
            "/memories", json={"content": "survives restarts", "source_repo": None}
        )
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
            assert (
                await client.post("/memories", json={"content": "before", "source_repo": None})
            ).status_code == 201
            await asyncio.to_thread(server.stop)

            during = await client.post(
                "/memories", json={"content": "during the outage", "source_repo": None}
            )
            assert during.status_code == 503
            assert during.headers["retry-after"]
            assert during.json()["detail"] == "database unavailable"
            assert (await client.get("/readyz")).status_code == 503

            await asyncio.to_thread(server.start)
            # The pooled connections all died with the server; the first one found dead
            # renews the pool, so the very first request after the restart succeeds.
            after = await client.post("/memories", json={"content": "after", "source_repo": None})
            assert after.status_code == 201

            # A restart nobody noticed (no request while it was down): every idle pooled
            # connection is dead, and still the first request succeeds.
            await asyncio.to_thread(server.stop)
            await asyncio.to_thread(server.start)
            unnoticed = await client.post(
                "/memories", json={"content": "after a quiet restart", "source_repo": None}
            )
            assert unnoticed.status_code == 201
            listed = await client.get("/memories")
            assert sorted(m["content"] for m in listed.json()["memories"]) == [
                "after",
                "after a quiet restart",
                "before",
            ]
    finally:
        await asyncio.to_thread(server.stop)


async def test_a_write_cut_by_a_restart_and_retried_with_its_key_is_stored_once(
    tmp_path: Path,
) -> None:
    server = EmbeddedPostgres(tmp_path)
    url = await asyncio.to_thread(server.start)
    await upgrade_head_async(url)
    embedder = GatedEmbedder()
    request: dict[str, Any] = {
        "json": {"content": "Written during a database restart", "source_repo": None},
        "headers": {"Idempotency-Key": "write-through-restart"},
    }
    try:
        async with serving(url, embedder) as client:
            # The key is claimed, then the database goes away while the route is embedding.
            cut = asyncio.create_task(client.post("/memories", **request))
            await embedder.entered.wait()
            await asyncio.to_thread(server.stop)
            embedder.gate.set()
            response = await asyncio.wait_for(cut, timeout=30)
            assert response.status_code == 503
            assert response.headers["retry-after"]

            await asyncio.to_thread(server.start)
            # The claim left behind by the cut request does not block the client's retry.
            retried = await client.post("/memories", **request)
            assert retried.status_code == 201
            replayed = await client.post("/memories", **request)
            assert replayed.json() == retried.json()
            listed = (await client.get("/memories")).json()["memories"]
            assert [(m["content"], m["observation_count"]) for m in listed] == [
                ("Written during a database restart", 1)
            ]
    finally:
        await asyncio.to_thread(server.stop)


async def test_restart_under_traffic_answers_promptly_and_loses_nothing(tmp_path: Path) -> None:
    """Writers keep writing while the database restarts; each retries a failed write with
    its Idempotency-Key, as a well-behaved client does."""
    server = EmbeddedPostgres(tmp_path)
    url = await asyncio.to_thread(server.start)
    await upgrade_head_async(url)
    writers, writes_each = 6, 12
    acknowledged = 0
    a_third_written, outage_seen = asyncio.Event(), asyncio.Event()
    slowest = 0.0
    statuses: list[int] = []
    try:
        async with serving(url) as client:

            async def write(writer: int, n: int) -> None:
                nonlocal acknowledged, slowest
                request: dict[str, Any] = {
                    "json": {"content": f"writer {writer} note {n}", "source_repo": None},
                    "headers": {"Idempotency-Key": f"w{writer}-{n}"},
                }
                while True:
                    started = loop.time()
                    response = await client.post("/memories", **request)
                    slowest = max(slowest, loop.time() - started)
                    statuses.append(response.status_code)
                    if response.status_code in (200, 201):
                        acknowledged += 1
                        if acknowledged == writers * writes_each // 3:
                            a_third_written.set()
                        return
                    assert response.status_code in (409, 503), response.text
                    assert response.headers["retry-after"]
                    outage_seen.set()
                    await asyncio.sleep(0.05)  # the client's back-off, not a stand-in for time

            async def writer(number: int) -> None:
                for n in range(writes_each):
                    await write(number, n)

            async def restart_midway() -> None:
                await a_third_written.wait()
                await asyncio.to_thread(server.stop)
                await outage_seen.wait()
                await asyncio.to_thread(server.start)

            loop = asyncio.get_running_loop()
            await asyncio.wait_for(
                asyncio.gather(restart_midway(), *(writer(w) for w in range(writers))),
                timeout=120,
            )
            listed = (await client.get("/memories", params={"limit": 100})).json()["memories"]
    finally:
        await asyncio.to_thread(server.stop)
    assert 503 in statuses
    assert slowest < 10  # an outage is answered, never hung on
    expected = {f"writer {w} note {n}" for w in range(writers) for n in range(writes_each)}
    contents = [m["content"] for m in listed]
    assert len(contents) == len(expected) and set(contents) == expected


def postmaster_pid(data_dir: Path) -> int:
    return int((data_dir / "pgdata" / "postmaster.pid").read_text().split("\n", 1)[0])


def start_held_by(
    tmp_path: Path,
    holder: subprocess.Popen[bytes],
    said: str,
    release: Callable[[], object],
    status: str | None = None,
) -> None:
    """A lock that names `holder` in the postmaster's place (its status set to `status`,
    when given), held for as long as the test likes: a start must say `said` and wait; once
    `release` ends the holder, it starts PostgreSQL anew."""
    import logging
    import threading
    from concurrent.futures import ThreadPoolExecutor

    server = EmbeddedPostgres(tmp_path)
    server.start()
    lines = (tmp_path / "pgdata" / "postmaster.pid").read_text().split("\n")
    server.stop()
    lines[0] = str(holder.pid)
    if status is not None:
        lines[7] = status
    (tmp_path / "pgdata" / "postmaster.pid").write_text("\n".join(lines))

    waiting = threading.Event()

    class Told(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if said in record.getMessage():
                waiting.set()

    told = Told()
    logging.getLogger("app.db.embedded").addHandler(told)
    again = EmbeddedPostgres(tmp_path)
    try:
        with ThreadPoolExecutor(1) as pool:
            starting = pool.submit(again.start)
            assert waiting.wait(60), "the start did not wait for it"
            assert not starting.done()
            release()
            starting.result(timeout=120)
        assert "(1 row)" in again._server.psql("SELECT 1;")
        assert postmaster_pid(tmp_path) != holder.pid
    finally:
        logging.getLogger("app.db.embedded").removeHandler(told)
        again.stop()


def test_a_start_waits_for_a_killed_postmaster_its_parent_has_not_reaped(
    tmp_path: Path,
) -> None:
    """A postmaster killed with -9 is a zombie until its parent reaps it: its pid is still
    taken, the wheel took it for a running server, and the start failed (issue 50)."""
    import os

    # A dead process not yet reaped, in the postmaster's place (this test is its parent).
    dead = subprocess.Popen(["true"])
    os.waitid(os.P_PID, dead.pid, os.WEXITED | os.WNOWAIT)  # exited, still a zombie
    # Reaped, as its parent (init, after a crash) does.
    start_held_by(tmp_path, dead, "left by a crash to finish exiting", dead.wait)


def test_a_start_waits_for_a_postmaster_still_shutting_down(tmp_path: Path) -> None:
    """A stop that outran its wait (seen in CI on a loaded machine, in the outage test's
    quiet restart) leaves a live postmaster whose lock says `stopping`: the wheel took it
    for a running server and the start failed."""
    stopping = subprocess.Popen(["sleep", "600"])

    def shutdown_ends() -> None:
        stopping.terminate()
        stopping.wait()

    try:
        start_held_by(tmp_path, stopping, "still shutting down", shutdown_ends, "stopping")
    finally:
        stopping.kill()


def test_a_start_clears_the_lock_a_killed_standalone_backend_left(tmp_path: Path) -> None:
    """initdb's bootstrap (a standalone backend) writes its pid negated in postmaster.pid;
    killed mid-way it leaves that lock behind, which the wheel cannot read (seen in CI
    after an initdb failed on a loaded machine). Once that process is gone, the start
    clears the stale lock and comes up."""
    server = EmbeddedPostgres(tmp_path)
    server.start()
    lock = (tmp_path / "pgdata" / "postmaster.pid").read_text()
    server.stop()
    gone = subprocess.Popen(["true"])
    gone.wait()  # exited and reaped: its pid names no process
    (tmp_path / "pgdata" / "postmaster.pid").write_text(f"-{gone.pid}\n" + lock.split("\n", 1)[1])
    again = EmbeddedPostgres(tmp_path)
    try:
        again.start()
        assert "(1 row)" in again._server.psql("SELECT 1;")
        assert postmaster_pid(tmp_path) > 0
    finally:
        again.stop()
