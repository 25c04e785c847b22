"""End to end: the official MCP client connects to /mcp on a real HTTP server."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import asyncpg
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import TextContent

from app.cli import main as cli_main
from app.services.keys import KeyService
from tests.server import free_port, server_log, start_server, stdio_server

TOOLS = {
    "store_memory",
    "search_memories",
    "remember",
    "learn_strategy",
    "get_strategy_hint",
    "retry_context",
    "start_session",
    "end_session",
    "snapshot",
    "run_pruning",
    "get_access_stats",
}


@pytest.fixture
def mcp_url(served: str) -> str:
    return f"{served}/mcp"


def text_of(result: Any) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    if result.structured_content is not None:
        return dict(result.structured_content)
    data: dict[str, Any] = json.loads(result.content[0].text)
    return data


async def test_client_lists_tools_stores_and_finds(mcp_url: str) -> None:
    async with Client(mcp_url) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools >= TOOLS

        stored = payload(
            await client.call_tool(
                "store_memory",
                {
                    "content": "Use pgvector iterative scans for filtered HNSW queries",
                    "memory_type": "decision",
                    "source_repo": "acme/api",
                    "name": "iterative scans",
                },
            )
        )
        assert stored["status"] == "stored"
        assert stored["message"] == "Stored: iterative scans (decision)"

        again = payload(
            await client.call_tool(
                "store_memory",
                {
                    "content": "Use pgvector iterative scans for filtered HNSW queries",
                    "source_repo": "acme/api",
                    "name": "iterative scans",
                },
            )
        )
        assert again["status"] == "reinforced"
        assert again["message"].startswith("Reinforced: iterative scans")

        found = payload(
            await client.call_tool(
                "search_memories",
                {"query": "filtered vector search", "source_repo": "acme/api", "format": "full"},
            )
        )
        assert found["results"][0]["memory"]["id"] == stored["id"]
        assert set(found["results"][0]) >= {"score", "similarity", "keyword_score"}


async def test_client_remember_and_bad_input_is_a_tool_error(mcp_url: str) -> None:
    async with Client(mcp_url) as client:
        remembered = payload(
            await client.call_tool(
                "remember",
                {
                    "text": "Always pin the Postgres major version in CI images",
                    "context": "CI broke when the image moved to Postgres 18",
                    "source_repo": None,
                },
            )
        )
        assert remembered["message"] == (
            "Stored: Always pin the Postgres major version in CI images (patterns)"
        )
        found = payload(
            await client.call_tool("search_memories", {"query": "CI broke", "format": "full"})
        )
        assert found["results"][0]["memory"]["context"] == (
            "CI broke when the image moved to Postgres 18"
        )
        short = await client.call_tool("remember", {"text": "too short", "source_repo": None})
        assert short.is_error
        assert "in 3 words or more" in text_of(short)


async def test_search_keeps_what_was_stored_since(mcp_url: str, db: asyncpg.Connection) -> None:
    async with Client(mcp_url) as client:
        for text in (
            "Rotate the staging TLS certificate by hand",
            "Rotate the TLS cert via certbot",
        ):
            stored = payload(
                await client.call_tool("store_memory", {"content": text, "source_repo": "r"})
            )
            if "by hand" in text:  # written a month ago
                await db.execute(
                    "UPDATE memories SET created_at = now() - interval '30 days' WHERE id = $1",
                    UUID(stored["id"]),
                )
        arguments = {"query": "rotate TLS certificate", "source_repo": "r", "format": "full"}
        found = payload(await client.call_tool("search_memories", {**arguments, "since": "7d"}))
        assert [r["memory"]["content"] for r in found["results"]] == [
            "Rotate the TLS cert via certbot"
        ]
        refused = await client.call_tool("search_memories", {**arguments, "since": "soonish"})
        assert refused.is_error and "since" in text_of(refused)


async def test_lifecycle_tools(mcp_url: str) -> None:
    async with Client(mcp_url) as client:
        started = payload(await client.call_tool("start_session", {"source_repo": "r"}))
        assert started["capture"]["capture_mode"] == "ask-first"
        ended = payload(
            await client.call_tool(
                "end_session",
                {"session_id": started["session_id"], "status": "completed", "summary": "done"},
            )
        )
        assert ended["status"] == "completed"
        snap = await client.call_tool("snapshot", {"source_repo": "r"})
        assert "done" in text_of(snap)
        pruned = payload(await client.call_tool("run_pruning", {"dry_run": True}))
        assert pruned["message"].startswith("Nothing to archive")
        stats = payload(await client.call_tool("get_access_stats", {}))
        assert stats["total"] == 0


async def test_stdio_server_serves_the_same_tools(database_url: str) -> None:
    async with Client(stdio_server(database_url)) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools >= TOOLS
        hint = payload(
            await client.call_tool("get_strategy_hint", {"task": "anything", "source_repo": "none"})
        )
        assert hint["hint"] == ""


async def test_cli_remember_against_a_running_server(served: str, db: asyncpg.Connection) -> None:
    text = "Avoid mocking the database in tests of SQL behaviour"
    code = await asyncio.to_thread(
        cli_main, ["remember", text, "--url", served, "--context", "review of PR 12"]
    )
    assert code == 0
    row = await db.fetchrow("SELECT category, context FROM memories WHERE content = $1", text)
    assert (row["category"], row["context"]) == ("anti-patterns", "review of PR 12")
    short = await asyncio.to_thread(cli_main, ["remember", "too short", "--url", served])
    assert short == 1


async def test_cli_remember_sends_the_api_key(served: str, db: asyncpg.Connection) -> None:
    key = (await KeyService.on_connection(db).create("default", "cli", "agent")).key
    text = "Pass the API key from the environment to every client command"
    refused = await asyncio.to_thread(cli_main, ["remember", text, "--url", served])
    assert refused == 1
    sent = await asyncio.to_thread(cli_main, ["remember", text, "--url", served, "--api-key", key])
    assert sent == 0
    assert await db.fetchval("SELECT count(*) FROM memories WHERE content = $1", text) == 1


async def test_serve_exits_non_zero_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await start_server(tmp_path, port)
        assert await asyncio.wait_for(process.wait(), 120) == 1
    log = server_log(tmp_path).read_text()
    assert "could not serve on 127.0.0.1:" in log
    # It stopped the embedded database on its way out.
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists()


async def test_every_tool_says_when_to_call_it_and_what_it_returns(mcp_url: str) -> None:
    async with Client(mcp_url) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        description = tool.description or ""
        # One line each (every request pays for it), saying when to call the tool.
        assert description == " ".join(description.split()) and 60 <= len(description) <= 260
        assert any(
            w in description
            for w in ("Before", "After", "On a", "When", "when", "For", "Admins", "first")
        ), tool.name


# What an agent gets back from a write: the outcome, never the row it just sent echoed.
BRIEF_KEYS = {
    "store_memory": {"status", "message", "id", "may_supersede"},
    "remember": {"status", "message", "id", "may_supersede"},
    "start_session": {"session_id", "pruning", "capture"},
    "end_session": {"session_id", "status", "ended_at"},
}


async def test_write_tools_answer_briefly(mcp_url: str) -> None:
    long_text = "A durable learning about the deploy pipeline and its caches. " * 20
    async with Client(mcp_url) as client:
        answers = {
            "store_memory": await client.call_tool(
                "store_memory",
                {"content": long_text, "tags": ["ci"], "context": long_text, "source_repo": None},
            ),
            "remember": await client.call_tool(
                "remember", {"text": long_text + " (again)", "source_repo": None}
            ),
            "start_session": await client.call_tool("start_session", {"source_repo": "r"}),
        }
        session_id = payload(answers["start_session"])["session_id"]
        answers["end_session"] = await client.call_tool(
            "end_session", {"session_id": session_id, "status": "completed", "summary": long_text}
        )
    for tool, answer in answers.items():
        assert not answer.is_error, text_of(answer)
        assert set(payload(answer)) <= BRIEF_KEYS[tool], tool
        # the answer is about the outcome: far smaller than what was sent
        assert len(text_of(answer)) < 400, (tool, len(text_of(answer)))


async def test_stdio_bridge_reaches_a_running_server_with_its_key(
    served: str, db: asyncpg.Connection
) -> None:
    key = (await KeyService.on_connection(db).create("team-a", "bridge", "agent")).key
    bridge = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp", "--url", served],
        env={**os.environ, "AGENT_MEMORY_API_KEY": key, "AGENT_MEMORY_REPO": "acme/api"},
    )
    async with Client(bridge) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} >= TOOLS
        stored = payload(
            await client.call_tool("store_memory", {"content": "Bridged writes land in team-a"})
        )
        refused = await client.call_tool("store_memory", {"content": "x", "colour": "red"})
    assert refused.is_error and "Extra inputs are not permitted" in text_of(refused)
    row = await db.fetchrow("SELECT tenant_id, content, source_repo FROM memories WHERE id = $1",
                            UUID(stored["id"]))  # fmt: skip
    assert (row["tenant_id"], row["content"]) == ("team-a", "Bridged writes land in team-a")
    # The repository the bridge runs in, for a call that names none.
    assert row["source_repo"] == "acme/api"


async def test_stdio_bridge_is_quiet(served: str) -> None:
    """Its stdout is the protocol's; stderr only says what went wrong."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]  # fmt: skip
    lines = "".join(json.dumps(m) + "\n" for m in messages).encode()
    for flags in ((), ("--verbose",)):
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "app.cli", "mcp", "--url", served, *flags,
            env={**os.environ, "LOG_FORMAT": "json"},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(lines), 60)
        assert len(out.decode().strip().splitlines()) == 2  # initialize, tools/list
        assert err == b"", err


async def test_stdio_bridge_answers_an_error_when_the_server_is_down() -> None:
    bridge = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp", "--url", f"http://127.0.0.1:{free_port()}"],
        env=dict(os.environ),
    )
    with pytest.raises(BaseException) as refused:  # an answer, not a hang
        async with asyncio.timeout(30), Client(bridge):
            pass
    error = refused.value
    while isinstance(error, BaseExceptionGroup):  # the client's task groups wrap it
        error = error.exceptions[0]
    assert "not reachable" in str(error), refused.value
