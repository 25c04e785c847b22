"""A connected client's grant lives in PostgreSQL: the real server process stopped and
started again between the grant and the next call loses nothing, and a second server
process on the same database takes the same tokens (no state held in a process)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from tests.oauth_flow import Browser, Kept, connected, mcp_call, sdk_client
from tests.server import free_port, start_server, wait_until_ready


@asynccontextmanager
async def server(data_dir: Path, port: int, **env: str) -> AsyncIterator[str]:
    """The real server on this port and data directory until the block ends (SIGTERM)."""
    process = await start_server(data_dir, port, **env)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            await wait_until_ready(http, process, data_dir)
        yield base
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), 60) == 0


async def key_for(person: str, env: dict[str, str]) -> str:
    """`agent-memory keys create` against the running server's database."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "keys", "create", "--name", f"{person} laptop",
        "--role", "admin", "--person", person,
        env={**os.environ, **env}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    return out.decode().strip()


async def test_a_restart_between_the_grant_and_the_next_call_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AGENT_MEMORY_DATA_DIR", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    places = {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data")}
    data_dir, port = tmp_path / "srv", free_port()
    data_dir.mkdir()
    storage = Kept()
    async with server(data_dir, port, **places) as base:
        browser = Browser(base, await key_for("Ada", places))
        oauth = sdk_client(base, browser, storage)
        async with connected(base, oauth) as client:
            await client.call_tool(
                "remember", {"text": "The grant survives restarts", "source_repo": "acme/api"}
            )
    assert len(browser.consent_pages) == 1 and storage.tokens is not None
    granted = storage.tokens

    async with server(data_dir, port, **places) as base:
        async with connected(base, oauth) as client:
            # The same access token, after the restart: no one is asked again.
            found = await client.call_tool(
                "search_memories", {"query": "grant survives restarts", "format": "full"}
            )
            assert "The grant survives restarts" in str(found.content)
            assert storage.tokens.access_token == granted.access_token
            # And its refresh token, rotated by this process.
            oauth.context.token_expiry_time = 1.0  # 1970: the client takes it for expired
            await client.list_tools()
        assert storage.tokens.refresh_token != granted.refresh_token
        assert len(browser.consent_pages) == 1

        # A second process on the same database (another worker) takes the token too.
        shared = {**places, "PUBLIC_URL": base}
        async with server(data_dir, free_port(), **shared) as other:
            async with httpx.AsyncClient(base_url=other) as http:
                answer = await http.post("/mcp", **mcp_call(storage.tokens.access_token))
            assert answer.status_code == 200, answer.text
