"""The loop through the real Codex CLI, Gemini CLI and GitHub Copilot CLI (installed by
scripts/agent-clients), each configured by `agent-memory-client install` in a home of its
own, against a stub of its model's API that records every request: the snapshot at the
start, recall on the prompt and on a failed command, a `remember` filed under the clone's
repository, the session recorded.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from tests.conftest import serving
from tests.helpers.agent_clients import (
    CODEX,
    COPILOT,
    GEMINI,
    RECALLED,
    client_env,
    codex_home,
    codex_run,
    copilot_home,
    copilot_run,
    gemini_home,
    gemini_run,
    install,
)
from tests.helpers.git import checkout, git
from tests.helpers.model_stubs import (
    Script,
    chat_completions_api,
    gemini_api,
    responses_api,
    strings,
)
from tests.helpers.planted_page import PLANTED, fetch_from_afar, page_app

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
