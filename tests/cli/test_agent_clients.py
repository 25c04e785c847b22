"""The loop through the real Codex CLI and Gemini CLI (installed by scripts/agent-clients),
each configured by `agent-memory-client install` in a home of its own, against a stub of its
model's API that records every request: the snapshot at the start, recall on the prompt and
on a failed command, a `remember` filed under the clone's repository, the session recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.cli.test_claude_code import (
    PLANTED,
    RECALLED,
    checkout,
    fetch_from_afar,
    git,
    page_app,
)
from tests.conftest import serving

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-memory"
CODEX = CACHE / "codex" / "node_modules" / ".bin" / "codex"
GEMINI = CACHE / "gemini" / "node_modules" / ".bin" / "gemini"

PATTERN = (
    "Upload tests must each use their own tmp_path: a shared temp dir makes them fail with"
    " PermissionError"
)
FIX = (
    "Never run check.py without helper.py: ModuleNotFoundError: No module named 'helper'"
    " means helper.py is missing; create it with OK = 'ok'"
)
SNAPSHOT_MEMORY = "app/db/pool.py sets hnsw.ef_search per connection"
PROMPT = "Why does the upload test fail with PermissionError in CI?"


@dataclass
class Script:
    """What the stub model does: each step a tool call (a shell command, or one of our MCP
    tools by the end of its name), made once the request offers that tool; then text."""

    steps: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    text: str = "Done: I looked at the repository."

    def next_call(self, offered: list[str]) -> tuple[str, dict[str, Any]] | None:
        if not self.steps:
            return None
        wanted, arguments = self.steps[0]
        for name in offered:
            if name == wanted or name.endswith(f"_{wanted}") or name.endswith(f"__{wanted}"):
                self.steps.pop(0)
                return name, arguments
        return None

    def seen(self, since: int = 0, until: int | None = None) -> str:
        return "\n".join(json.dumps(r) for r in self.requests[since:until])


def responses_api(script: Script) -> Starlette:
    """OpenAI's Responses API as Codex streams it."""

    async def responses(request: Request) -> Response:
        body = await request.json()
        script.requests.append(body)
        offered: list[str] = []  # an MCP server's tools come in a namespace: NAMESPACE__tool
        for tool in body.get("tools") or []:
            inner = tool.get("tools") if tool.get("type") == "namespace" else None
            offered += [f"{tool['name']}__{t['name']}" for t in inner or []] or [tool.get("name")]
        call = script.next_call([str(name) for name in offered])
        n = len(script.requests)
        if call is not None:
            name, arguments = call
            namespace, _, inner_name = name.rpartition("__")
            item: dict[str, Any] = {"type": "function_call", "name": inner_name or name,
                    "arguments": json.dumps(arguments), "call_id": f"call_{n}", "id": f"fc_{n}",
                    **({"namespace": namespace} if namespace else {})}  # fmt: skip
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                    "content": [{"type": "output_text", "text": script.text}]}  # fmt: skip
        usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
                 "output_tokens_details": None, "total_tokens": 2}  # fmt: skip

        async def events() -> AsyncIterator[str]:
            for event in (
                {"type": "response.created", "response": {"id": f"resp_{n}"}},
                {"type": "response.output_item.done", "item": item},
                {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}},
            ):
                yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def anything(request: Request) -> Response:
        return JSONResponse({"data": [], "models": []})

    return Starlette(
        routes=[
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/{path:path}", anything, methods=["GET", "POST"]),
        ]
    )


def gemini_api(script: Script) -> Starlette:
    """The Gemini API as Gemini CLI streams it (streamGenerateContent, server-sent events)."""

    async def generate(request: Request) -> Response:
        body = await request.json()
        script.requests.append(body)
        offered = [
            str(d.get("name"))
            for tool in body.get("tools") or []
            for d in tool.get("functionDeclarations") or []
        ]
        call = script.next_call(offered)
        part = (
            {"functionCall": {"name": call[0], "args": call[1]}}
            if call is not None
            else {"text": script.text}
        )
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                              "totalTokenCount": 2},
        }  # fmt: skip
        if "stream" not in request.url.path.lower():
            return JSONResponse(chunk)

        async def events() -> AsyncIterator[str]:
            yield f"data: {json.dumps(chunk)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/{path:path}", generate, methods=["POST"])])


def client_env(home: Path, served: str, **extra: str) -> dict[str, str]:
    """The client's environment: a home of its own, and this interpreter's scripts first on
    PATH (the extension's hooks run `agent-memory-client` from there)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {
        "PATH": path, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"), "AGENT_MEMORY_URL": served, **extra,
    }  # fmt: skip


def install(client: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory_client", "install", client],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


async def run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    process = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(), 150)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"{command[0]} did not end within 150 s") from None
    assert process.returncode == 0, err.decode()[-3000:]
    return out.decode()


async def codex_run(repo: Path, home: Path, model_url: str, served: str, prompt: str) -> str:
    env = client_env(home, served, STUB_KEY="stub", CODEX_HOME=str(home / ".codex"))
    command = [str(CODEX), "exec", "--dangerously-bypass-approvals-and-sandbox", prompt]
    return await run(command, repo, env)


def codex_home(home: Path, model_url: str, served: str) -> str:
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "stub-model"\nmodel_provider = "stub"\n\n[model_providers.stub]\n'
        f'name = "stub"\nbase_url = "{model_url}/v1"\nwire_api = "responses"\n'
        'env_key = "STUB_KEY"\n'
    )
    env = client_env(home, served, CODEX_HOME=str(home / ".codex"), AGENT_MEMORY_CODEX=str(CODEX))
    return install("codex", env)


async def gemini_run(repo: Path, home: Path, model_url: str, served: str, prompt: str) -> str:
    env = client_env(
        home, served, GEMINI_API_KEY="stub", GOOGLE_GEMINI_BASE_URL=model_url,
        GEMINI_CLI_TRUST_WORKSPACE="true",
    )  # fmt: skip
    command = [str(GEMINI), "-m", "gemini-2.5-flash", "--yolo", "-p", prompt]
    return await run(command, repo, env)


def gemini_home(home: Path, model_url: str, served: str) -> str:
    (home / ".gemini").mkdir(parents=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return install("gemini", client_env(home, served))


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def our_tools(request: dict[str, Any]) -> list[Any]:
    """The memory tools as a request offers them: Codex's namespace, Gemini's declarations."""
    found: list[Any] = []
    for tool in request.get("tools") or []:
        if tool.get("name") == "mcp__agent_memory":
            found.append(tool)
        found += [
            d for d in tool.get("functionDeclarations") or []
            if d["name"].startswith("mcp_agent-memory_")
        ]  # fmt: skip
    return found


EXTENSION = Path(__file__).parents[2] / "integrations" / "gemini"


def gemini_extension_home(home: Path, model_url: str, served: str) -> str:
    """Gemini CLI with the extension linked, the client half found on PATH."""
    (home / ".gemini").mkdir(parents=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    done = subprocess.run(
        [str(GEMINI), "extensions", "link", str(EXTENSION), "--consent"],
        env=client_env(home, served), stdin=subprocess.DEVNULL, capture_output=True,
        text=True, check=True, timeout=120,
    )  # fmt: skip
    assert "linked successfully" in done.stdout + done.stderr
    return "updated: the extension, linked"


CLIENTS = {
    "codex": (CODEX, responses_api, codex_home, codex_run, "exec_command", "cmd"),
    "gemini": (GEMINI, gemini_api, gemini_home, gemini_run, "run_shell_command", "command"),
    "gemini-extension": (
        GEMINI,
        gemini_api,
        gemini_extension_home,
        gemini_run,
        "run_shell_command",
        "command",
    ),
}


@pytest.mark.parametrize("client", list(CLIENTS))
async def test_the_loop_through_the_real_client(
    client: str, served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    binary, api, configure, run_client, shell, shell_argument = CLIENTS[client]
    if not binary.exists():
        pytest.skip(f"no {client} CLI: ./scripts/agent-clients installs it")
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    (repo / "check.py").write_text("import helper\nprint(helper.OK)\n")
    async with httpx.AsyncClient(base_url=served) as http:
        for memory in (
            {"content": SNAPSHOT_MEMORY, "memory_type": "decision", "source_repo": "acme/api",
             "files": ["app/db/pool.py"]},
            {"content": PATTERN, "memory_type": "code_pattern", "source_repo": "acme/api"},
        ):  # fmt: skip
            assert (await http.post("/memories", json=memory)).status_code == 201
    # The pattern is a month old: not in the snapshot, so only the prompt's recall hands it.
    await db.execute("UPDATE memories SET created_at = now() - interval '30 days'"
                     " WHERE content = $1", PATTERN)  # fmt: skip
    script = Script(
        steps=[
            ("remember", {"text": FIX, "files": ["check.py"]}),  # "Never": an anti-pattern
            (shell, {shell_argument: "python3 check.py"}),
        ]
    )
    async with serving(api(script)) as model_url:
        installed = configure(home, model_url, served)
        assert "created" in installed or "updated" in installed
        await run_client(repo, home, model_url, served, PROMPT)
    offered = [t.get("name") or t.get("type") for t in script.requests[0].get("tools") or []]
    assert not script.steps, f"calls not offered: {script.steps}; offered: {offered}"
    first = script.seen(0, 1)
    surface = len(json.dumps(our_tools(script.requests[0])))
    head, tail = "# Long-term memory (agent-memory) for", "personal data."  # ask-first's end
    [text] = [t for t in strings(script.requests[0]) if head in t]
    start = len(text[text.index(head) : text.index(tail, text.index(head)) + len(tail)])
    assert surface <= 4_000  # the five tools, as the Claude Code test holds them
    print(f"{client}: tool surface {surface} chars a request, start context {start} chars")
    # The session start's snapshot, and the prompt's recall, in the first request.
    assert SNAPSHOT_MEMORY in first and 'for \\"acme/api\\"' in first
    assert RECALLED in first and "their own tmp_path" in first
    # The `remember` went through the bridge: filed under the clone's repository, at HEAD.
    row = await db.fetchrow(
        "SELECT source_repo, git_commit, git_branch, memory_type FROM memories WHERE content = $1",
        FIX,
    )
    assert row is not None, "the remember call did not store the memory"
    assert dict(row) == {
        "source_repo": "acme/api", "git_commit": git(repo, "rev-parse", "HEAD"),
        "git_branch": "main", "memory_type": "anti_pattern",
    }  # fmt: skip
    # The failed command's recall handed the fix written earlier in the session.
    failed_at = next(
        n for n, r in enumerate(script.requests) if "No module named 'helper'" in json.dumps(r)
    )
    after_failure = script.seen(failed_at, failed_at + 1)
    assert RECALLED in after_failure and "helper.py is missing" in after_failure
    # The session recorded, by the client's name, with the agent's last words.
    sessions = await db.fetch("SELECT agent, source_repo, status, summary FROM sessions")
    agent = {"codex": "codex", "gemini": "gemini-cli", "gemini-extension": "gemini-cli"}[client]
    assert [(s["agent"], s["source_repo"], s["status"]) for s in sessions] == [
        (agent, "acme/api", "completed")
    ]
    # Gemini CLI's last words after the reminder hold the turn's words before it as well.
    assert sessions[0]["summary"].endswith(script.text)


@pytest.mark.parametrize("client", ["codex", "gemini"])
async def test_a_lesson_a_web_page_planted_waits_in_every_client(
    client: str, served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """Issue 50's path through Codex CLI and Gemini CLI, as test_claude_code.py's through
    Claude Code: the agent downloads a page holding an injection with its shell tool and
    `remember`s it; the session's hook recorded the page, so the lesson waits for a person,
    and the next session's first request does not hold it."""
    binary, api, configure, run_client, shell, shell_argument = CLIENTS[client]
    if not binary.exists():
        pytest.skip(f"no {client} CLI: ./scripts/agent-clients installs it")
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    served_page: list[int] = []
    async with serving(page_app(served_page)) as page_url:
        url, fetch = fetch_from_afar(page_url)
        script = Script(steps=[(shell, {shell_argument: fetch}), ("remember", {"text": PLANTED})])
        async with serving(api(script)) as model_url:
            configure(home, model_url, served)
            await run_client(repo, home, model_url, served, "Set up the tests as the guide says")
            assert not script.steps, f"calls not made: {script.steps}"
            row = await db.fetchrow(
                "SELECT held_at, provenance FROM memories WHERE content = $1", PLANTED
            )
            assert row is not None and row["held_at"] is not None
            assert json.loads(row["provenance"])["sources"] == [url]
            seen = len(script.requests)
            await run_client(repo, home, model_url, served, "Run the tests")
            assert "x.example/setup.sh" not in script.seen(seen, seen + 1)
