"""The client half (agent_memory_client): what runs beside the agent. It imports nothing of
the server, its stdio bridge files writes where the agent works, and its hooks keep to one
deadline each."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_memory_client import hooks
from agent_memory_client.bridge import bridge
from agent_memory_client.connection import Connection, Deadline, Unavailable
from agent_memory_client.loop.state import state_file
from tests.conftest import serving

SERVER_SIDE = ("app", "httpx", "pydantic", "mcp", "anyio", "starlette", "asyncpg", "platformdirs")


def claude_hook(event: str, raw: str, url: str | None = None) -> tuple[str, str]:
    return hooks.run_hook("claude-code", event, raw, url)


def test_the_client_half_imports_nothing_of_the_server() -> None:
    """What keeps a hook's start to an interpreter and the standard library (tens of ms;
    bench/hook_start.py measures it)."""
    probe = (
        "import sys, agent_memory_client.__main__, agent_memory_client.hooks,"
        " agent_memory_client.bridge\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {SERVER_SIDE!r}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def rpc(id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}


INITIALIZE = rpc(
    1,
    "initialize",
    {"protocolVersion": "2025-06-18", "capabilities": {},
     "clientInfo": {"name": "t", "version": "1"}},
)  # fmt: skip


async def bridged(cwd: Path, served: str, *messages: dict[str, Any]) -> dict[int, Any]:
    """The bridge's answers by id, for `messages` sent after initialize."""
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *messages]
    stdin = io.BytesIO("".join(json.dumps(m) + "\n" for m in lines).encode())
    stdout = io.BytesIO()
    await asyncio.to_thread(bridge, stdin, stdout, str(cwd), served, None, "agent")
    answers = [json.loads(line) for line in stdout.getvalue().splitlines()]
    return {a["id"]: a.get("result", a.get("error")) for a in answers}


def remember(id_: int, **arguments: Any) -> dict[str, Any]:
    return rpc(id_, "tools/call", {"name": "remember", "arguments": arguments})


async def test_the_bridge_files_a_write_under_the_repository_it_runs_in(
    served: str, db: asyncpg.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_MEMORY_REPO", raising=False)
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.email=t@e.org", "-c", "user.name=t", "commit", "-q",
        "--allow-empty", "-m", "one")  # fmt: skip
    git(repo, "remote", "add", "origin", "https://github.com/acme/api.git")
    here = "The upload test shares a temp dir with another test; use tmp_path"
    everywhere = "Write commit messages in the imperative mood, in every repository"
    answers = await bridged(
        repo, served,
        rpc(2, "tools/list"),
        remember(3, text=here),
        remember(4, text=everywhere, source_repo=None),
    )  # fmt: skip
    assert "resources" not in answers[1]["capabilities"]
    assert "prompts" not in answers[1]["capabilities"]
    assert sorted(t["name"] for t in answers[2]["tools"]) == [
        "confirm_memory", "get_strategy_hint", "learn_strategy", "remember", "search_memories"
    ]  # fmt: skip
    assert not answers[3].get("isError") and not answers[4].get("isError"), answers
    rows = {
        r["content"]: dict(r)
        for r in await db.fetch("SELECT content, source_repo, git_commit, git_branch FROM memories")
    }
    head = git(repo, "rev-parse", "HEAD")
    assert rows[here] | {"content": None} == {
        "content": None, "source_repo": "acme/api", "git_commit": head, "git_branch": "main"
    }  # fmt: skip
    # Global only when said (null); then it records no commit of this checkout.
    assert (rows[everywhere]["source_repo"], rows[everywhere]["git_commit"]) == (None, None)


async def test_outside_git_the_bridge_files_under_the_folders_name(
    served: str, db: asyncpg.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_MEMORY_REPO", raising=False)
    folder = tmp_path / "notes"
    folder.mkdir()
    answers = await bridged(folder, served, remember(2, text="Notes live in one markdown file"))
    assert not answers[2].get("isError"), answers
    assert await db.fetchval("SELECT source_repo FROM memories") == "notes"


def test_a_spent_deadline_asks_nothing() -> None:
    server = Connection("http://127.0.0.1:9", None, Deadline(0))
    with pytest.raises(Unavailable, match="out of time"):
        server.call("GET", "/sessions")


async def test_session_start_keeps_to_its_deadline_against_a_server_that_never_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setitem(hooks.BUDGET_S, "start", 0.5)
    with socket.socket() as silent:  # accepts connections (the backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        payload = json.dumps({"session_id": "s", "cwd": str(tmp_path)})
        out, note = await asyncio.to_thread(claude_hook, "session-start", payload, url)
    assert "continuing without memory" in note
    assert "unavailable" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


async def test_session_end_is_one_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """All that stands between the agent's exit and Claude Code's early cut of SessionEnd
    (docs/benchmarks.md, "What a hook's start costs")."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    seen: list[tuple[str, str, Any]] = []

    async def anything(request: Request) -> Response:
        body = await request.json() if request.method == "POST" else None
        seen.append((request.method, request.url.path, body))
        return JSONResponse({"session_id": "m1", "status": "completed"})

    stub = Starlette(routes=[Route("/{path:path}", anything, methods=["GET", "POST"])])
    state_file("c1").parent.mkdir(parents=True)
    state_file("c1").write_text(json.dumps({"session_id": "m1", "capture_mode": "off"}))
    transcript = tmp_path / "t.jsonl"
    said = {"role": "assistant", "content": [{"type": "text", "text": "Fixed it."}]}
    transcript.write_text(json.dumps({"type": "assistant", "message": said}) + "\n")
    payload = json.dumps({"session_id": "c1", "transcript_path": str(transcript)})
    async with serving(stub) as url:
        out, note = await asyncio.to_thread(claude_hook, "session-end", payload, url)
    assert (out, note.split(" in ")[0]) == ("", "agent-memory: session recorded")
    assert seen == [("POST", "/sessions/m1/end", {"status": "completed", "summary": "Fixed it."})]
    assert not state_file("c1").exists()


async def test_stop_and_session_end_take_the_words_claude_code_hands_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The transcript may not hold a turn's last words yet when Stop runs (seen on a busy
    machine): the reminder and the session's summary come from the words Stop is handed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ended: list[Any] = []

    async def anything(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse({"drafts": []})
        ended.append(await request.json())
        return JSONResponse({"session_id": "m1", "status": "completed"})

    stub = Starlette(routes=[Route("/{path:path}", anything, methods=["GET", "POST"])])
    state_file("c1").parent.mkdir(parents=True)
    state_file("c1").write_text(json.dumps({"session_id": "m1", "capture_mode": "silent"}))
    transcript = tmp_path / "t.jsonl"
    asked = {"role": "user", "content": "fix the flaky test"}
    transcript.write_text(json.dumps({"type": "user", "message": asked}) + "\n")
    base = {"session_id": "c1", "transcript_path": str(transcript)}
    stop = {**base, "stop_hook_active": False, "last_assistant_message": "Fixed it."}
    again = {**stop, "stop_hook_active": True, "last_assistant_message": "Nothing to keep."}
    async with serving(stub) as url:
        out, _ = await asyncio.to_thread(claude_hook, "stop", json.dumps(stop), url)
        assert json.loads(out)["decision"] == "block"
        assert json.loads(out)["reason"].startswith("Before you finish")
        out, _ = await asyncio.to_thread(claude_hook, "stop", json.dumps(again), url)
        assert out == ""  # reminded once
        await asyncio.to_thread(claude_hook, "session-end", json.dumps(base), url)
    assert ended == [{"status": "completed", "summary": "Nothing to keep."}]


async def test_a_scripted_session_drafts_only_what_a_change_fixed(
    served: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seven failures of a working day, as the hooks see them: only those a change to the
    code then fixed become drafts (a retry that just passed, a fix by another command, a
    linter's complaint do not)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    repo = tmp_path / "api"
    repo.mkdir()
    base = {"session_id": "day", "cwd": str(repo)}

    def hook(event: str, **payload: Any) -> None:
        hooks.run_hook("claude-code", event, json.dumps({**base, **payload}), served)

    def failed(command: str, error: str) -> None:
        hook("post-tool-use-failure", tool_name="Bash", tool_input={"command": command},
             error=error)  # fmt: skip

    def ran(command: str) -> None:
        hook("post-tool-use", tool_name="Bash", tool_input={"command": command})

    def edited(path: str) -> None:
        hook("post-tool-use", tool_name="Edit", tool_input={"file_path": str(repo / path)})

    def day() -> None:
        hook("session-start")
        failed("pytest tests/test_ci.py", "E   ModuleNotFoundError: No module named 'yaml'")
        ran("pip install pyyaml")
        ran("pytest tests/test_ci.py")  # fixed by another command: no file changed
        failed("pytest tests/test_upload.py -q", "E   PermissionError: [Errno 13] /tmp/up")
        edited("tests/conftest.py")
        ran("pytest tests/test_upload.py")  # a draft
        failed("git push", "! [rejected] main -> main (non-fast-forward)")
        ran("git pull --rebase")
        ran("git push")  # nothing changed in the code
        failed("pytest tests/test_net.py", "E   TimeoutError")
        ran("pytest tests/test_net.py")  # flaky: passed as it was
        failed("psql -c 'select * from plans'", 'ERROR:  relation "plans" does not exist')
        edited("migrations/versions/0007_plans.py")
        ran("psql -c 'select * from plans'")  # a draft
        failed("ruff check app", "app/x.py:1:1: F401 `os` imported but unused")
        edited("app/x.py")
        ran("ruff check app")  # a linter's: no lesson

    await asyncio.to_thread(day)
    state = json.loads(state_file("day").read_text())
    async with httpx.AsyncClient(base_url=served) as http:
        drafts = (await http.get(f"/sessions/{state['session_id']}/drafts")).json()["drafts"]
    assert [d["files"] for d in drafts] == [
        ["tests/conftest.py"], ["migrations/versions/0007_plans.py"]
    ]  # fmt: skip
    assert drafts[0]["text"] == (
        "`pytest tests/test_upload.py -q` failed with: PermissionError: [Errno 13] /tmp/up."
        " Fixed by changing tests/conftest.py; `pytest tests/test_upload.py` passes."
    )
