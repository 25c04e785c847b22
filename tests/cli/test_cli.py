"""The `agent-memory` command as a person runs it: a subprocess against a real server."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from app import __version__
from app.db.embedded import EmbeddedPostgres
from app.progress import Progress
from app.services.keys import KeyService


async def run(*args: str, **env: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        *args,
        env={**os.environ, "LOG_FORMAT": "json", **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_version_and_help_show_defaults() -> None:
    code, out, _ = await run("--version")
    assert (code, out.strip()) == (0, f"agent-memory {__version__}")
    code, out, _ = await run("search", "--help")
    assert code == 0
    assert "(default: 10)" in out and "AGENT_MEMORY_API_KEY" in out


async def test_search_list_and_show_against_a_server_with_keys(
    served: str, db: asyncpg.Connection
) -> None:
    key = (await KeyService(db).create("default", "cli", "agent")).key
    async with httpx.AsyncClient(base_url=served) as http:
        stored = await http.post(
            "/memories",
            json={
                "content": "Pin the Postgres major version in CI images",
                "memory_type": "decision",
            },
            headers={"Authorization": f"Bearer {key}"},
        )
    memory_id = stored.json()["memory"]["id"]
    env = {"AGENT_MEMORY_URL": served, "AGENT_MEMORY_API_KEY": key}

    code, out, err = await run("search", "postgres version in CI", "--type", "decision", **env)
    assert code == 0, err
    assert memory_id in out and "Pin the Postgres major version" in out
    code, out, _ = await run("list", "--json", **env)
    assert [m["id"] for m in json.loads(out)["memories"]] == [memory_id]
    code, out, _ = await run("show", memory_id, **env)
    assert out.startswith("Pin the Postgres major version in CI images")

    # No key: one line that says why, no traceback, a non-zero exit.
    code, out, err = await run("list", "--url", served, AGENT_MEMORY_API_KEY="")
    assert code == 1
    assert err.strip().splitlines() == [
        "agent-memory list: an API key is required: Authorization: Bearer <key>"
    ]


async def test_an_unreachable_server_is_one_line() -> None:
    code, _, err = await run("search", "anything", "--url", "http://127.0.0.1:9")
    assert code == 2
    assert err.strip().splitlines() == [
        "agent-memory search: agent-memory is not reachable at http://127.0.0.1:9 (ConnectError)"
    ]


async def test_keys_on_a_data_directory_never_migrated(tmp_path: Path) -> None:
    code, _, err = await run("keys", "list", "--data-dir", str(tmp_path))
    assert code == 0, err
    assert "Traceback" not in err
    # The embedded database was brought to the schema and stopped again.
    server = EmbeddedPostgres(tmp_path)
    url = await asyncio.to_thread(server.start)
    try:
        conn = await asyncpg.connect(url)
        assert await conn.fetchval("SELECT count(*) FROM api_keys") == 0
        await conn.close()
    finally:
        await asyncio.to_thread(server.stop)


async def test_keys_against_an_unmigrated_external_database_says_what_to_run(
    scratch_database: Any,
) -> None:
    url = await scratch_database("agent_memory_unmigrated")
    code, _, err = await run("keys", "list", DATABASE_URL=url)
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        "agent-memory keys: the database is not migrated; run `agent-memory migrate`"
    )


def test_progress_is_drawn_on_a_terminal_only() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped, terminal = io.StringIO(), Terminal()
    for stream in (piped, terminal):
        meter = Progress("export", 4, "memories", stream)
        for _ in range(4):
            meter.advance()
        meter.close()
    assert piped.getvalue() == ""  # a pipe or a log gets the summary line, not the meter
    assert terminal.getvalue().endswith("\rexport [" + "#" * 30 + "] 100%  4/4 memories\n")
