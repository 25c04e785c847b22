"""The Claude Code plugin: its files are what Claude Code reads, and its hooks answer the
JSON Claude Code sends, against a live server and with the server down."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from agent_memory_client.clients.claude_code import EVENT_NAMES
from tests.conftest import serving
from tests.helpers.agent_clients import CLAUDE, PLUGIN, RECALLED, claude_run
from tests.helpers.console import csrf_of
from tests.helpers.git import checkout, git
from tests.helpers.model_stubs import StubModel, failing_then_fixed
from tests.helpers.planted_page import PLANTED, fetch_from_afar, page_app


def test_the_plugin_files_are_well_formed() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "agent-memory"
    wrapper = "${CLAUDE_PLUGIN_ROOT}/bin/agent-memory-client"
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["memory"]
    # The bridge, which knows the repository the agent works in (HTTP cannot).
    assert server == {
        "type": "stdio", "command": wrapper, "args": ["mcp", "--tools", "agent"],
    }  # fmt: skip
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    commands = {
        event: [h["command"] for group in groups for h in group["hooks"]]
        for event, groups in hooks.items()
    }
    assert commands == {
        "SessionStart": [f'"{wrapper}" hook session-start'],
        "UserPromptSubmit": [f'"{wrapper}" hook user-prompt-submit'],
        "PostToolUseFailure": [f'"{wrapper}" hook post-tool-use-failure'],
        "PostToolUse": [f'"{wrapper}" hook post-tool-use'],
        "Stop": [f'"{wrapper}" hook stop'],
        "SessionEnd": [f'"{wrapper}" hook session-end'],
    }
    # Each hook is one the adapter reads (client/agent_memory_client/clients/claude_code.py).
    assert {c.split()[-1] for cs in commands.values() for c in cs} == set(EVENT_NAMES)
    assert os.access(PLUGIN / "bin" / "agent-memory-client", os.X_OK)
    for document in (
        PLUGIN / "commands" / "remember.md",
        PLUGIN / "skills" / "capturing-learnings" / "SKILL.md",
    ):
        head = document.read_text().split("---")[1]
        assert "description:" in head, document


async def hook(event: str, payload: Mapping[str, object], **env: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agent_memory_client",
        "hook",
        event,
        env={**os.environ, **env},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(json.dumps(payload).encode()), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


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
    code, out, err = await hook("session-start", start, **env)
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
    code, out, err = await hook("session-end", end, **env)
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
    code, out, err = await hook("session-start", payload, **env)
    assert code == 0
    assert len(err.strip().splitlines()) == 1 and "continuing without memory" in err
    # Prompt: it gave up on the refusal itself, not after waiting out its budget.
    assert "Connection refused" in err and "out of time" not in err
    assert "unavailable" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    code, out, err = await hook("session-end", {"session_id": "x"}, **env)
    assert (code, out) == (0, "")


# How Claude Code names the plugin's MCP tools.
TOOL_PREFIX = "mcp__plugin_agent-memory_memory__"


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code installs it"
)
async def test_the_plugin_through_the_real_claude_code(
    served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    async with httpx.AsyncClient(base_url=served) as http:
        for memory in (
            {"content": "Always write commit messages in the imperative mood",
             "memory_type": "decision", "source_repo": None},
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
        assert 'for \\"acme/api\\"' in first
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


AGENT_TOOLS = [
    "confirm_memory", "get_strategy_hint", "learn_strategy", "remember", "search_memories",
]  # fmt: skip


def plugin_tools(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools of the plugin's server in one request, and any resource tools."""
    return [
        tool
        for tool in request["tools"]
        if tool["name"].startswith(TOOL_PREFIX) or "McpResource" in tool["name"]
    ]


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code installs it"
)
@pytest.mark.parametrize("on_demand", [True, False], ids=["tools-on-demand", "tools-up-front"])
async def test_the_agent_loop_in_open_mode_through_the_real_claude_code(
    served: str, db: asyncpg.Connection, tmp_path: Path, on_demand: bool
) -> None:
    """Open mode (no key), the plugin as installed: the tools connect. Loaded on demand
    (Claude Code's default, through its ToolSearch tool) a request carries only their names
    until the agent loads one; sent up front (`ENABLE_TOOL_SEARCH=false`, as older clients
    did) they cost at most 4,000 characters a request. A `remember` that names no
    repository is filed under the one the agent works in, at the commit it was written at;
    the next session marks stale only the memory written before the file's change, not the
    one written after it."""
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    home.mkdir()
    before = git(repo, "rev-parse", "HEAD")
    async with httpx.AsyncClient(base_url=served) as http:
        old = {
            "content": "app/db/pool.py keeps hnsw.ef_search at 100", "source_repo": "acme/api",
            "files": ["app/db/pool.py"], "git_commit": before, "memory_type": "decision",
        }  # fmt: skip
        assert (await http.post("/memories", json=old)).status_code == 201

    def commit_the_change() -> None:  # what the agent did before it remembered
        (repo / "app" / "db" / "pool.py").write_text("EF_SEARCH = 200\n")
        git(repo, "commit", "-q", "-am", "pool: wider search")

    learned = "Raising hnsw.ef_search to 200 in app/db/pool.py fixed the recall drop"
    stub = StubModel()
    stub.tool_calls = [(f"{TOOL_PREFIX}remember", {"text": learned, "files": ["app/db/pool.py"]})]
    stub.before_tool = commit_the_change
    settings = {} if on_demand else {"ENABLE_TOOL_SEARCH": "false"}
    async with serving(stub.app()) as model_url:
        await claude_run(
            repo, home, model_url, served, f"{TOOL_PREFIX}remember", settings=settings
        )  # fmt: skip
        first = stub.requests[0]
        tools = plugin_tools(first)
        if on_demand:
            if "ToolSearch" not in {tool["name"] for tool in first["tools"]}:
                pytest.skip("this Claude Code sends every tool up front (2.1.197 did)")
            assert tools == []  # named in a list of deferred tools, nothing more
            assert all(f"{TOOL_PREFIX}{name}" in json.dumps(first) for name in AGENT_TOOLS)
            assert stub.tools_loaded == [f"{TOOL_PREFIX}remember"]
        else:
            assert sorted(t["name"].removeprefix(TOOL_PREFIX) for t in tools) == AGENT_TOOLS
            assert len(json.dumps(tools)) <= 4_000
        answered = [
            block for r in stub.requests for m in r["messages"] if isinstance(m["content"], list)
            for block in m["content"] if block.get("type") == "tool_result"
        ]  # fmt: skip
        assert answered and not any(block.get("is_error") for block in answered), answered
        row = await db.fetchrow(
            "SELECT source_repo, git_commit, git_branch, files FROM memories WHERE content = $1",
            learned,
        )
        assert dict(row) == {
            "source_repo": "acme/api",
            "git_commit": git(repo, "rev-parse", "HEAD"),
            "git_branch": "main",
            "files": ["app/db/pool.py"],
        }
        assert await db.fetchval("SELECT count(*) FROM memories WHERE source_repo IS NULL") == 0

        seen = len(stub.requests)
        await claude_run(repo, home, model_url, served)
        context = stub.seen(seen)
    stale = dict(await db.fetch("SELECT content, stale_since IS NOT NULL FROM memories"))
    assert stale == {old["content"]: True, learned: False}
    assert 'possibly stale: \\"app/db/pool.py\\" changed' in context
    statuses = await db.fetch("SELECT status FROM sessions ORDER BY started_at")
    assert [r["status"] for r in statuses] == ["completed", "completed"]


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code installs it"
)
async def test_memory_comes_on_the_prompt_and_on_a_failed_command(
    served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """A prompt the memory bears on gets it in the model's first request; an unrelated one
    gets nothing; a failed Bash command gets the fix that worked before. Neither memory is
    in the session-start snapshot (a code pattern; an error pattern older than its week)."""
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    home.mkdir()
    pattern = ("Upload tests must each use their own tmp_path: a shared temp dir makes"
               " them fail with PermissionError")  # fmt: skip
    fix = ("ModuleNotFoundError: No module named 'nosuchmodule_xyz' means the dev extras are"
           " missing: run pip install -e '.[dev]'")  # fmt: skip
    async with httpx.AsyncClient(base_url=served) as http:
        for content, kind in ((pattern, "code_pattern"), (fix, "error_pattern")):
            body = {"content": content, "memory_type": kind, "source_repo": "acme/api"}
            assert (await http.post("/memories", json=body)).status_code == 201
    await db.execute("UPDATE memories SET created_at = now() - interval '30 days'")
    stub = StubModel()
    async with serving(stub.app()) as model_url:
        await claude_run(
            repo, home, model_url, served,
            prompt="Why does the upload test fail with PermissionError in CI?",
        )  # fmt: skip
        assert RECALLED in stub.seen() and "their own tmp_path" in stub.seen()

        seen = len(stub.requests)
        await claude_run(repo, home, model_url, served, prompt="Write a haiku about autumn")
        assert RECALLED not in stub.seen(seen)

        seen = len(stub.requests)
        stub.tool_calls = [("Bash", {"command": "python3 -c 'import nosuchmodule_xyz'"})]
        await claude_run(repo, home, model_url, served, "Bash", prompt="Write a haiku")
        before_failure, after_failure = stub.seen(seen, seen + 1), stub.seen(seen + 1)
    assert RECALLED not in before_failure  # the prompt recalled nothing: the failure did
    assert "No module named" in after_failure  # the tool's error reached the model
    assert RECALLED in after_failure and "run pip install -e" in after_failure


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code installs it"
)
async def test_a_failure_a_change_fixed_becomes_a_draft_the_stop_reminder_lists(
    served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """A scripted session: a command fails, the agent writes a file, the same command
    passes. The service keeps one draft (not a memory), and the Stop reminder lists it."""
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    home.mkdir()
    stub = StubModel()
    stub.tool_calls = failing_then_fixed(repo)
    async with serving(stub.app()) as model_url:
        await claude_run(repo, home, model_url, served, "Bash", "Write", prompt="Fix check.py")
    assert not stub.tool_calls  # the model's three calls were made
    seen = stub.seen()
    assert "Drafts from this session" in seen
    assert "No module named 'helper'" in seen and "helper.py" in seen
    assert await db.fetchval("SELECT count(*) FROM memories") == 0  # a draft is no memory
    # The session ended: its draft went to the review queue, for a person.
    assert await db.fetchval("SELECT drafts FROM sessions") == "[]"
    queued = await db.fetch("SELECT client, text FROM drafts")
    assert [r["client"] for r in queued] == ["claude-code"]
    assert "No module named 'helper'" in queued[0]["text"]


async def test_the_plugin_without_the_client_on_path_says_so(tmp_path: Path) -> None:
    """A hook exits 0 (the agent starts without memory); the MCP server exits 1, which
    Claude Code lists as failed."""
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin)  # outside the checkout: no .venv beside it
    for args, code in ((["hook", "session-start"], 0), (["mcp", "--tools", "agent"], 1)):
        process = await asyncio.create_subprocess_exec(
            str(plugin / "bin" / "agent-memory-client"), *args,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(plugin)},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(b"{}"), 30)
        assert process.returncode == code and out == b""
        assert err.decode().strip().splitlines() == [
            "agent-memory: the agent-memory-client command was not found (set"
            " AGENT_MEMORY_CLIENT to its path); continuing without memory"
        ]


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code installs it"
)
async def test_a_file_the_agent_reads_brings_its_memories_once(
    served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """Read app/db/pool.py: the next request holds the memories whose files name it (one
    a month old, so the snapshot did not hand it first); reading it again adds nothing."""
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    home.mkdir()
    about = "app/db/pool.py must keep hnsw.ef_search at 100 or recall drops"
    async with httpx.AsyncClient(base_url=served) as http:
        body = {"content": about, "memory_type": "decision", "source_repo": "acme/api",
                "files": ["app/db/pool.py"]}  # fmt: skip
        assert (await http.post("/memories", json=body)).status_code == 201
    await db.execute("UPDATE memories SET created_at = now() - interval '30 days'")
    read = ("Read", {"file_path": str(repo / "app" / "db" / "pool.py")})
    stub = StubModel()
    stub.tool_calls = [read, read]
    async with serving(stub.app()) as model_url:
        await claude_run(repo, home, model_url, served, "Read", prompt="Look at the pool")
    assert not stub.tool_calls
    first_read = next(n for n, r in enumerate(stub.requests) if "EF_SEARCH = 100" in json.dumps(r))
    assert about not in stub.seen(0, first_read)  # neither the snapshot nor the prompt
    assert "Memories about this file" in stub.seen(first_read, first_read + 1)
    # The whole conversation goes with each request: handed once, it is there once.
    assert stub.seen(len(stub.requests) - 1).count("Memories about this file") == 1


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code installs it"
)
async def test_a_lesson_a_web_page_planted_waits_for_a_person(
    served: str, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """Issue 50's path, through the real CLI with a stub model: the agent fetches a page
    holding an injection and `remember`s it. The next session's first request does not hold
    it; the console lists it for review beside the page's URL; once a person approves it, a
    later session is handed it."""
    repo, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    home.mkdir()
    fetched: list[int] = []
    stub = StubModel()
    async with serving(page_app(fetched)) as page_url, serving(stub.app()) as model_url:
        url, fetch = fetch_from_afar(page_url)
        stub.tool_calls = [
            ("Bash", {"command": fetch}),
            (f"{TOOL_PREFIX}remember", {"text": PLANTED}),
        ]
        await claude_run(
            repo, home, model_url, served, "Bash", f"{TOOL_PREFIX}remember",
            prompt="Set up the tests as the guide says",
        )  # fmt: skip
        assert fetched and not stub.tool_calls  # the page was read, the lesson recorded
        row = await db.fetchrow("SELECT id, held_at, provenance FROM memories")
        assert row["held_at"] is not None
        assert json.loads(row["provenance"])["sources"] == [url]

        seen = len(stub.requests)
        await claude_run(repo, home, model_url, served, prompt="Run the tests")
        assert "x.example/setup.sh" not in stub.seen(seen, seen + 1)  # its first request

        async with httpx.AsyncClient(base_url=served) as console:
            review = await console.get("/console/review")
            assert PLANTED.split("`")[1] in review.text and url in review.text
            approved = await console.post(
                f"/console/memories/{row['id']}/approve",
                data={"csrf_token": csrf_of(review.text)},
            )
            assert approved.status_code == 303
        assert await db.fetchval("SELECT held_at FROM memories") is None

        seen = len(stub.requests)
        await claude_run(repo, home, model_url, served, prompt="Run the tests")
        assert "x.example/setup.sh" in stub.seen(seen, seen + 1)
