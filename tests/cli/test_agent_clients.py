"""The loop through the real Codex CLI, Gemini CLI and GitHub Copilot CLI (installed by
scripts/agent-clients), each configured by `agent-memory-client install` in a home of its
own, against a stub of its model's API that records every request: the snapshot at the
start, recall on the prompt and on a failed command, a `remember` filed under the clone's
repository, the session recorded.
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
COPILOT = CACHE / "copilot" / "node_modules" / ".bin" / "copilot"

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
            if name == wanted or name.endswith((f"_{wanted}", f"__{wanted}", f"-{wanted}")):
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


def chat_completions_api(script: Script) -> Starlette:
    """OpenAI's Chat Completions API as Copilot CLI streams it (its BYOK provider's default
    wire API)."""

    async def completions(request: Request) -> Response:
        body = await request.json()
        script.requests.append(body)
        offered = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or []]
        call = script.next_call(offered)
        n = len(script.requests)
        delta: dict[str, Any] = {"role": "assistant", "content": script.text}
        if call is not None:
            function = {"name": call[0], "arguments": json.dumps(call[1])}
            called = {"index": 0, "id": f"call_{n}", "type": "function", "function": function}
            delta = {"role": "assistant", "tool_calls": [called]}
        finish = "tool_calls" if call is not None else "stop"
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}

        async def events() -> AsyncIterator[str]:
            for choice, more in (({"index": 0, "delta": delta, "finish_reason": None}, {}),
                                 ({"index": 0, "delta": {}, "finish_reason": finish},
                                  {"usage": usage})):  # fmt: skip
                chunk = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0,
                         "model": body.get("model"), "choices": [choice], **more}  # fmt: skip
                yield f"data: {json.dumps(chunk)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def anything(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": []})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/{path:path}", anything, methods=["GET", "POST"]),
        ]
    )


def client_env(home: Path, served: str, **extra: str) -> dict[str, str]:
    """The client's environment: a home of its own, and this interpreter's scripts first on
    PATH (the extension's hooks run `agent-memory-client` from there)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {
        "PATH": path, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"), "AGENT_MEMORY_URL": served, **extra,
    }  # fmt: skip


def install(client: str, env: dict[str, str], *where: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory_client", "install", client, *where],
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


async def copilot_run(
    repo: Path, home: Path, model_url: str, served: str, prompt: str, *flags: str
) -> str:
    """Copilot CLI offline against the stub (its BYOK provider: no GitHub login), the
    user-level hooks and MCP server install wrote (a repository's need a trusted folder)."""
    env = client_env(
        home, served, COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=f"{model_url}/v1",
        COPILOT_PROVIDER_API_KEY="stub", COPILOT_MODEL="gpt-4.1", COPILOT_AUTO_UPDATE="false",
        COPILOT_PKG_CACHE_HOME=str(CACHE / "copilot"),  # where scripts/agent-clients unpacked it
    )  # fmt: skip
    command = [str(COPILOT), "-p", prompt, "--allow-all-tools", "--no-ask-user", *flags]
    return await run(command, repo, env)


def copilot_home(home: Path, model_url: str, served: str) -> str:
    home.mkdir(parents=True)
    return install("copilot", client_env(home, served))


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def our_tools(request: dict[str, Any]) -> list[Any]:
    """The memory tools as a request offers them: Codex's namespace, Gemini's declarations,
    Copilot CLI's functions."""
    found: list[Any] = []
    for tool in request.get("tools") or []:
        function = tool.get("function") or {}
        if tool.get("name") == "mcp__agent_memory" or function.get("name", "").startswith(
            "agent-memory-"
        ):
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
    "copilot": (COPILOT, chat_completions_api, copilot_home, copilot_run, "bash", "command"),
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
    # The session recorded, by the client's name, with the agent's last words (Copilot CLI
    # hands no hook its words: completed without them, once a turn ended).
    sessions = await db.fetch("SELECT agent, source_repo, status, summary FROM sessions")
    agent = {"codex": "codex", "gemini": "gemini-cli", "gemini-extension": "gemini-cli",
             "copilot": "copilot-cli"}[client]  # fmt: skip
    assert [(s["agent"], s["source_repo"], s["status"]) for s in sessions] == [
        (agent, "acme/api", "completed")
    ]
    # Gemini CLI's last words after the reminder hold the turn's words before it as well.
    summary = sessions[0]["summary"]
    assert summary is None if client == "copilot" else summary.endswith(script.text)
    # The capture reminder reached the model as its next prompt.
    assert "Before you finish" in script.seen(len(script.requests) - 1)


@pytest.mark.parametrize("client", ["codex", "gemini", "copilot"])
async def test_a_lesson_a_web_page_planted_waits_in_every_client(
    client: str, served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """Issue 50's path through Codex CLI, Gemini CLI and Copilot CLI, as test_claude_code.py's
    through Claude Code: the agent downloads a page holding an injection with its shell tool and
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


async def test_a_failure_a_change_fixed_becomes_a_draft_through_copilot(
    served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """test_claude_code.py's scripted session through Copilot CLI: a command fails, the
    agent creates the missing file, the same command passes. The service keeps one draft
    (not a memory), the agentStop reminder lists it as the next prompt, and the session's
    end queues it for a person."""
    if not COPILOT.exists():
        pytest.skip("no copilot CLI: ./scripts/agent-clients installs it")
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    (repo / "check.py").write_text("import helper\nprint(helper.OK)\n")
    script = Script(
        steps=[
            ("bash", {"command": "python3 check.py", "description": "check"}),
            ("create", {"path": str(repo / "helper.py"), "file_text": "OK = 'ok'\n"}),
            ("bash", {"command": "python3 check.py", "description": "check again"}),
        ]
    )
    async with serving(chat_completions_api(script)) as model_url:
        copilot_home(home, model_url, served)
        await copilot_run(repo, home, model_url, served, "Fix check.py")
    assert not script.steps, f"calls not made: {script.steps}"
    reminded = script.seen(len(script.requests) - 1)
    assert "Drafts from this session" in reminded and "No module named" in reminded
    assert "helper.py" in reminded
    assert await db.fetchval("SELECT count(*) FROM memories") == 0  # a draft is no memory
    assert await db.fetchval("SELECT drafts FROM sessions") == "[]"
    queued = await db.fetch("SELECT client, text FROM drafts")
    assert [r["client"] for r in queued] == ["copilot-cli"]
    assert "No module named 'helper'" in queued[0]["text"]


async def test_the_real_copilot_runs_a_project_install_once_the_folder_is_trusted(
    served: str, tmp_path: Path
) -> None:
    """`install copilot --project`: the hooks in .github/hooks/ and the server in
    .github/mcp.json, which Copilot CLI reads only in a folder the user trusts (it asks at an
    interactive start; `--trust-folder` trusts it for one `-p` run)."""
    if not COPILOT.exists():
        pytest.skip("no copilot CLI: ./scripts/agent-clients installs it")
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    home.mkdir()
    memory = {"content": SNAPSHOT_MEMORY, "memory_type": "decision", "source_repo": "acme/api"}
    async with httpx.AsyncClient(base_url=served) as http:
        assert (await http.post("/memories", json=memory)).status_code == 201
    install("copilot", client_env(home, served), "--project", str(repo))
    script = Script()
    async with serving(chat_completions_api(script)) as model_url:
        await copilot_run(repo, home, model_url, served, "Look around")
        trusted_from = len(script.requests)
        await copilot_run(repo, home, model_url, served, "Look around", "--trust-folder")
    untrusted, trusted = script.requests[0], script.requests[trusted_from]
    assert SNAPSHOT_MEMORY not in json.dumps(untrusted) and not our_tools(untrusted)
    assert SNAPSHOT_MEMORY in json.dumps(trusted) and len(our_tools(trusted)) == 5
