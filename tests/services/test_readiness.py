"""/readyz after a start: ready once the database has read back what its buffers held
(pg_prewarm's autoprewarm), and ready anyway, logged, once the wait has run out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.db.prewarm import PrewarmState, Warmth, prewarm_state
from app.embeddings.base import Embedder
from app.main import create_app
from tests.conftest import running

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus


def reading(workers: int) -> PrewarmState:
    """What the database shows a few seconds after its start, a worker reading or not."""
    return PrewarmState(workers, up_s=2.0, autoprewarm=True, sees_workers=True, dumped=True)


@pytest.fixture
async def started(
    settings: Settings, embedder: Embedder, database_url: str
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """A service of its own, whose wait the test then replaces with one it scripts."""
    application = create_app(settings, embedder=embedder, database_url=database_url)
    async with running(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield application, client


async def test_ready_once_autoprewarm_has_read_the_buffers_back(
    started: tuple[FastAPI, httpx.AsyncClient],
) -> None:
    application, client = started
    warmth = application.state.runtime.warmth = Warmth()
    looks: asyncio.Queue[PrewarmState] = asyncio.Queue()
    watching = asyncio.create_task(warmth.watch(looks.get, bound_s=3600))
    try:
        await looks.put(reading(1))
        waiting = await client.get("/readyz")
        assert waiting.status_code == 503
        assert waiting.headers["retry-after"]
        assert "autoprewarm" in waiting.json()["warming"]
        await looks.put(reading(1))  # still reading: still not ready
        assert (await client.get("/readyz")).status_code == 503
        await looks.put(reading(0))  # the worker is done
        await warmth.until_warm()
        assert (await client.get("/readyz")).status_code == 200
    finally:
        watching.cancel()


async def test_the_wait_is_bounded_then_ready_anyway_and_logged(
    started: tuple[FastAPI, httpx.AsyncClient], caplog: pytest.LogCaptureFixture
) -> None:
    application, client = started
    warmth = application.state.runtime.warmth = Warmth()

    async def forever_reading() -> PrewarmState:
        return reading(1)

    with caplog.at_level(logging.WARNING, logger="agent_memory.health"):
        await warmth.watch(forever_reading, bound_s=0)
    assert (await client.get("/readyz")).status_code == 200
    assert any("ready anyway" in r.getMessage() for r in caplog.records)


async def test_a_start_with_nothing_to_read_back_is_ready_at_once(
    started: tuple[FastAPI, httpx.AsyncClient], database_url: str
) -> None:
    """The real look: on the test database no autoprewarm worker is reading (it reads only
    after a restart), so the service's own wait ended with its first look."""
    _, client = started
    conn = await asyncpg.connect(database_url)
    try:
        state = await prewarm_state(conn)
    finally:
        await conn.close()
    assert state.reading == 0
    assert state.nothing_to_wait_for()
    assert (await client.get("/readyz")).status_code == 200


def test_what_is_waited_for() -> None:
    assert not reading(1).nothing_to_wait_for()
    # No worker yet, seconds after the start: the leader may not have started it.
    assert not reading(0).nothing_to_wait_for()
    later = PrewarmState(0, up_s=60.0, autoprewarm=True, sees_workers=True, dumped=True)
    assert later.nothing_to_wait_for()
    nothing_written_down = PrewarmState(0, 2.0, autoprewarm=True, sees_workers=True, dumped=False)
    assert nothing_written_down.nothing_to_wait_for()
    # A login that cannot see background workers cannot wait for one.
    blind = PrewarmState(0, 2.0, autoprewarm=True, sees_workers=False, dumped=None)
    assert blind.nothing_to_wait_for()
    off = PrewarmState(0, 2.0, autoprewarm=False, sees_workers=True, dumped=True)
    assert off.nothing_to_wait_for()
