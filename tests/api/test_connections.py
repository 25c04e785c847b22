"""No connection is held for free: each timeout and cap of app/http_server.py, each with the
connection observed closed by the server (the waits are for that event, with room)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI

from app.config import Settings
from app.http_server import server_config
from tests.conftest import on_loopback

CLOSED_WITHIN_S = 30  # room for a busy machine; the server's own bounds are far shorter


@asynccontextmanager
async def guarded(app: FastAPI, settings: Settings, **rules: float) -> AsyncIterator[int]:
    """The test app behind the service's own server rules (`rules` override them)."""

    def config(port: int) -> uvicorn.Config:
        return server_config(
            app, settings.model_copy(update=rules), "127.0.0.1", port, lifespan="off"
        )

    async with on_loopback(config) as port:
        yield port


async def closed_by_server(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(), CLOSED_WITHIN_S)


async def test_a_connection_that_sends_nothing_is_closed(app: FastAPI, settings: Settings) -> None:
    async with guarded(app, settings, http_header_timeout_s=0.5) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answer = await closed_by_server(reader)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408")


async def test_a_body_a_byte_at_a_time_is_closed(app: FastAPI, settings: Settings) -> None:
    rules = {"http_body_grace_s": 0.5, "http_min_body_rate": 1000.0}
    async with guarded(app, settings, **rules) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /memories HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n"
            b"content-length: 425\r\n\r\n{"
        )
        await writer.drain()
        answer = await closed_by_server(reader)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408")


async def test_an_idle_keep_alive_connection_is_closed(app: FastAPI, settings: Settings) -> None:
    async with guarded(app, settings, http_keepalive_timeout_s=1) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nhost: t\r\n\r\n")
        await writer.drain()
        answer = await closed_by_server(reader)  # the answer, then the close
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200") and b'{"status":"ok"}' in answer


async def test_connections_past_the_per_client_cap_get_503(
    app: FastAPI, settings: Settings
) -> None:
    rules = {"http_max_connections_per_client": 3, "http_header_timeout_s": 60.0}
    async with guarded(app, settings, **rules) as port:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answer = await closed_by_server(reader)
        assert answer.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in answer
        writer.close()
        # The held ones still work, and once one goes, a new one is let in.
        first_reader, first_writer = held[0]
        first_writer.write(b"GET /healthz HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
        assert (await closed_by_server(first_reader)).startswith(b"HTTP/1.1 200")
        first_writer.close()
        await first_writer.wait_closed()
        again_reader, again_writer = await asyncio.open_connection("127.0.0.1", port)
        again_writer.write(b"GET /healthz HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
        assert (await closed_by_server(again_reader)).startswith(b"HTTP/1.1 200")
        for _, w in [*held[1:], (again_reader, again_writer)]:
            w.close()
