"""The Claude Code plugin: its files are what Claude Code reads, and its hooks answer the
JSON Claude Code sends, against a live server and with the server down."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.conftest import serving

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
    wrapper = '"${CLAUDE_PLUGIN_ROOT}/hooks/agent-memory-hook"'
    assert commands == {
        "SessionStart": [f"{wrapper} session-start"],
        "Stop": [f"{wrapper} stop"],
        "SessionEnd": [f"{wrapper} session-end"],
    }
    assert os.access(PLUGIN / "hooks" / "agent-memory-hook", os.X_OK)
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


CLAUDE = (
    Path(
        os.environ.get("AGENT_MEMORY_CLAUDE_DIR") or Path.home() / ".cache/agent-memory/claude-code"
    )
    / "node_modules"
    / ".bin"
    / "claude"
)


class StubModel:
    """A stand-in for the model's API: every request is kept; each answer streams `text`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.text = "Done: I looked at the repository."

    def app(self) -> Starlette:
        async def messages(request: Request) -> Response:
            body = await request.json()
            self.requests.append(body)
            if not body.get("stream"):
                return JSONResponse(self._message([{"type": "text", "text": self.text}]))
            return StreamingResponse(self._events(), media_type="text/event-stream")

        async def anything(request: Request) -> Response:
            return JSONResponse({})

        return Starlette(
            routes=[
                Route("/v1/messages", messages, methods=["POST"]),
                Route("/{path:path}", anything, methods=["GET", "POST", "HEAD"]),
            ]
        )

    def _message(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": "msg_stub", "type": "message", "role": "assistant", "model": "stub",
            "content": content, "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }  # fmt: skip

    async def _events(self) -> AsyncIterator[str]:
        start = {**self._message([]), "stop_reason": None}
        for name, data in (
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": self.text}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 5},
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
            ("message_stop", {"type": "message_stop"}),
        ):  # fmt: skip
            yield f"event: {name}\ndata: {json.dumps(data)}\n\n"

    def seen(self, since: int = 0) -> str:
        return "\n".join(json.dumps(r) for r in self.requests[since:])


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


async def claude_run(repo: Path, home: Path, model_url: str, served: str) -> str:
    process = await asyncio.create_subprocess_exec(
        str(CLAUDE), "-p", "Look at this repository", "--plugin-dir", str(PLUGIN),
        cwd=repo,
        env={
            "PATH": os.environ["PATH"], "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
            "ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "stub",
            "AGENT_MEMORY_URL": served, "DISABLE_AUTOUPDATER": "1",
            "AGENT_MEMORY_BIN": str(Path(sys.executable).parent / "agent-memory"),
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    return out.decode()


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code installs it"
)
async def test_the_plugin_through_the_real_claude_code(
    served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    async with httpx.AsyncClient(base_url=served) as http:
        for memory in (
            {"content": "Always write commit messages in the imperative mood",
             "memory_type": "decision"},
            {"content": "app/db/pool.py sets hnsw.ef_search per connection",
             "memory_type": "decision", "source_repo": "acme/api", "files": ["app/db/pool.py"]},
        ):  # fmt: skip
            assert (await http.post("/memories", json=memory)).status_code == 201
    repo, home = tmp_path / "checkout", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    git(repo, "remote", "add", "origin", "git@github.com:acme/api.git")
    (repo / "app" / "db").mkdir(parents=True)
    (repo / "app" / "db" / "pool.py").write_text("EF_SEARCH = 100\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pool")
    stub = StubModel()
    async with serving(stub.app()) as model_url:
        answer = await claude_run(repo, home, model_url, served)
        assert "Done: I looked at the repository." in answer
        first = stub.seen()
        # The session start's context reached the model: the repository's memory, the
        # global one, and the repository name to use.
        assert "app/db/pool.py sets hnsw.ef_search per connection" in first
        assert "Always write commit messages in the imperative mood" in first
        assert 'source_repo=\\"acme/api\\"' in first
        # The Stop hook reminded the agent, once, to capture what it learned.
        assert "Before you finish" in first
        row = await db.fetchrow("SELECT source_repo, status, git_commit, summary FROM sessions")
        assert (row["source_repo"], row["status"]) == ("acme/api", "completed")
        assert row["git_commit"] == git(repo, "rev-parse", "HEAD")
        assert row["summary"] == "Done: I looked at the repository."

        # A change to the file the memory is about: the next run hands it over marked.
        (repo / "app" / "db" / "pool.py").write_text("EF_SEARCH = 200\n")
        git(repo, "commit", "-q", "-am", "pool: wider search")
        seen = len(stub.requests)
        await claude_run(repo, home, model_url, served)
        assert 'possibly stale: \\"app/db/pool.py\\" changed' in stub.seen(seen)

        # A run in which the agent says nothing leaves no session in the snapshot.
        stub.text = ""
        await claude_run(repo, home, model_url, served)
    statuses = [
        r["status"] for r in await db.fetch("SELECT status FROM sessions ORDER BY started_at")
    ]
    assert statuses == ["completed", "completed", "abandoned"]
    async with httpx.AsyncClient(base_url=served) as http:
        snapshot = (await http.get("/snapshot", params={"source_repo": "acme/api"})).text
    recent = snapshot.split("## Recent sessions")[1].split("##")[0]
    assert recent.count("\n- ") == 2 and "ended before the agent answered" not in snapshot


async def test_the_hooks_without_agent_memory_on_path_exit_0(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin)  # outside the checkout: no .venv beside it
    process = await asyncio.create_subprocess_exec(
        str(plugin / "hooks" / "agent-memory-hook"), "session-start",
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(plugin)},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(b"{}"), 30)
    assert process.returncode == 0 and out == b""
    assert err.decode().strip().splitlines() == [
        "agent-memory: the agent-memory command was not found (set AGENT_MEMORY_BIN to its"
        " path); continuing without memory"
    ]
