"""The Claude Code plugin: its files are what Claude Code reads, and its hooks answer the
JSON Claude Code sends, against a live server and with the server down."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import asyncpg
import httpx

PLUGIN = Path(__file__).parents[2] / "integrations" / "claude-code"


def test_the_plugin_files_are_well_formed() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "agent-memory"
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["agent-memory"]
    assert server["type"] == "http" and server["url"].endswith("/mcp")
    assert "${AGENT_MEMORY_API_KEY" in server["headers"]["Authorization"]
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    commands = {
        event: [h["command"] for group in groups for h in group["hooks"]]
        for event, groups in hooks.items()
    }
    assert commands == {
        "SessionStart": ["agent-memory hook session-start"],
        "SessionEnd": ["agent-memory hook session-end"],
    }
    for document in (
        PLUGIN / "commands" / "remember.md",
        PLUGIN / "skills" / "capturing-learnings" / "SKILL.md",
    ):
        head = document.read_text().split("---")[1]
        assert "description:" in head, document


async def hook(
    event: str, payload: Mapping[str, object], **env: str
) -> tuple[int, str, str, float]:
    began = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        "hook",
        event,
        env={**os.environ, **env},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(json.dumps(payload).encode()), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode(), time.monotonic() - began


async def test_session_hooks_against_a_live_server(
    served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    async with httpx.AsyncClient(base_url=served) as http:
        await http.post(
            "/memories",
            json={
                "content": "Run migrations with alembic upgrade head",
                "memory_type": "decision",
                "source_repo": "acme-api",
            },
        )
    env = {
        "AGENT_MEMORY_URL": served,
        "AGENT_MEMORY_REPO": "acme-api",
        "XDG_CACHE_HOME": str(tmp_path),
    }
    start = {
        "session_id": "c1a2",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    code, out, err, _ = await hook("session-start", start, **env)
    assert code == 0, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    assert "Run migrations with alembic upgrade head" in answer["additionalContext"]
    assert "Never record secrets" in answer["additionalContext"]
    assert err.strip().startswith("agent-memory: memory loaded")

    (tmp_path / "t.jsonl").write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "fix it"}})
        + "\n"
        + json.dumps(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Fixed the flaky test."}],
                },
            }
        )
        + "\n"
    )
    end = {**start, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    del end["source"]
    code, out, err, _ = await hook("session-end", end, **env)
    assert (code, out) == (0, ""), err
    row = await db.fetchrow("SELECT status, summary, agent, source_repo FROM sessions")
    assert dict(row) == {
        "status": "completed",
        "summary": "Fixed the flaky test.",
        "agent": "claude-code",
        "source_repo": "acme-api",
    }


async def test_session_hooks_with_the_server_down_exit_0_promptly(tmp_path: Path) -> None:
    env = {"AGENT_MEMORY_URL": "http://127.0.0.1:9", "XDG_CACHE_HOME": str(tmp_path)}
    payload = {"session_id": "x", "cwd": str(tmp_path), "hook_event_name": "SessionStart"}
    code, out, err, took = await hook("session-start", payload, **env)
    assert code == 0 and took < 3  # the interpreter's start-up included
    assert len(err.strip().splitlines()) == 1 and "continuing without memory" in err
    assert "unavailable" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    code, out, err, _ = await hook("session-end", {"session_id": "x"}, **env)
    assert (code, out) == (0, "")
