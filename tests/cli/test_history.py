"""`agent-memory import-history`: past Claude Code and Codex sessions become drafts by the
live hooks' rule (a failure a change fixed) and the instruction rule, filed under the
session's repository, with the untrusted input read before; over transcripts the real
clients wrote (against a stub model), a second run queues nothing and a secret is never
stored. The instruction rule is held to a labelled set of prompts (its precision is in
docs/history.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from agent_memory_client.history import Report, Transcript, claude_code, codex, drafts_of
from agent_memory_client.history.instructions import instruction_of
from app.cli import main
from tests.cli.test_agent_clients import CODEX, Script, codex_home, codex_run, responses_api
from tests.cli.test_claude_code import (
    CLAUDE,
    StubModel,
    checkout,
    claude_run,
    failing_then_fixed,
)
from tests.conftest import serving
from tests.contracts.test_input_rules import GITHUB_TOKEN

FIXED = (
    "`python3 check.py` failed with: ModuleNotFoundError: No module named 'helper'. It passed"
    " after changing helper.py."
)
RULE = "Never edit the generated files; always use the make target instead."
PROMPT = f"No, {RULE[0].lower()}{RULE[1:]}"

# Prompts labelled by hand: True where a person would keep the rule it states.
LABELLED = {
    PROMPT: True,
    "no, use the make target": True,
    "From now on run ruff before committing.": True,
    "Please always use pnpm, not npm.": True,
    "Use uv instead of pip for installs.": True,
    "stop using print for logging": True,
    "Don't mock the database in these tests; use the testcontainer.": True,
    "In this repo we keep migrations backward compatible.": True,
    "Never push to main directly.": True,
    "Actually, run the integration tests with make itest.": True,
    "Fix the upload test": False,
    "Always failing test in CI, can you fix?": False,
    "Don't worry about the tests, just fix it": False,
    "What does this function do?": False,
    "Add a --json flag to the list command and update the README.": False,
    "Run the tests": False,
    "Why does check.py fail with ModuleNotFoundError?": False,
    "never mind, it works now": False,
    "```\nnever do this\n```": False,
    "/review": False,
    "Refactor the search service. Keep the public API. Write tests. Update docs. Then"
    " benchmark it.": False,
}


def test_the_instruction_rule_on_labelled_prompts() -> None:
    found = {prompt: instruction_of(prompt) is not None for prompt in LABELLED}
    assert found == LABELLED
    assert instruction_of(PROMPT) == RULE


def jsonl(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def claude_entry(kind: str, content: Any, n: int, cwd: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind, "sessionId": "s-1", "cwd": cwd, "message": {"role": kind, "content": content},
        "timestamp": f"2026-10-01T10:00:{n:02d}Z", **extra,
    }  # fmt: skip


def call(
    n: int, tool: str, tool_input: dict[str, Any], output: str, cwd: str, failed: bool = False
) -> list[dict[str, Any]]:
    """The n-th tool call of a Claude Code transcript and its result: two entries, at
    seconds 10n and 10n + 1."""
    use = {"type": "tool_use", "id": f"t{n}", "name": tool, "input": tool_input}
    done = {"type": "tool_result", "tool_use_id": f"t{n}", "content": output, "is_error": failed}
    return [
        claude_entry("assistant", [use], 10 * n, cwd),
        claude_entry("user", [done], 10 * n + 1, cwd),
    ]


def fixed(cwd: str, error: str, check: str = "python3 check.py") -> list[dict[str, Any]]:
    """A command fails with `error`, the agent writes helper.py, the command passes."""
    return [
        *call(1, "Bash", {"command": "python3 check.py"}, error, cwd, failed=True),
        *call(3, "Write", {"file_path": f"{cwd}/helper.py"}, "File created", cwd),
        *call(4, "Bash", {"command": check}, "ok", cwd),
    ]


def test_a_claude_code_transcript_replays_as_the_live_hooks_saw_it(tmp_path: Path) -> None:
    cwd = str(tmp_path / "repo")
    steps = [
        claude_entry("user", PROMPT, 1, cwd),
        claude_entry("user", "Stop hook feedback: remember things", 2, cwd, isMeta=True),
        # Read before the fix: the draft carries it.
        *call(0, "WebFetch", {"url": "https://example.com/fix"}, "a page", cwd),
        *fixed(
            cwd, "Traceback\nModuleNotFoundError: No module named 'helper'", "python3 check.py -q"
        ),
        # A retry that passes with nothing changed, and a formatter: no lesson.
        *call(5, "Bash", {"command": "make lint"}, "Error: E501", cwd, failed=True),
        *call(6, "Bash", {"command": "make lint"}, "ok", cwd),
        {"type": "api-request-blob", "message": {"role": "user", "content": "Always copy"}},
    ]
    transcript = claude_code.read(jsonl(tmp_path / "projects" / "x" / "s-1.jsonl", steps))
    assert transcript is not None and transcript.session == "s-1" and transcript.cwd == cwd
    found = drafts_of(transcript, cwd)
    assert [(f.kind, f.text, f.files, f.sources) for f in found] == [
        ("fix", FIXED, ["helper.py"],
         ["https://example.com/fix"]),
        ("instruction", RULE, [], []),
    ]  # fmt: skip
    assert found[0].seen_at == "2026-10-01T10:00:41Z"


def codex_line(kind: str, payload: dict[str, Any], n: int) -> dict[str, Any]:
    return {"timestamp": f"2026-10-02T09:00:{n:02d}Z", "type": kind, "payload": payload}


def item(item: dict[str, Any], n: int) -> dict[str, Any]:
    return codex_line("event_msg", {"type": "item_completed", "item": item}, n)


def test_codex_rollouts_old_and_new_replay_alike(tmp_path: Path) -> None:
    cwd = str(tmp_path / "repo")
    meta = codex_line("session_meta", {"id": "c-1", "cwd": cwd}, 0)
    failed = "Process exited with code 1\nOutput:\nModuleNotFoundError: No module named 'helper'"
    newer = [
        meta,
        item({"type": "UserMessage", "content": [{"type": "text", "text": PROMPT}]}, 1),
        item(
            {
                "type": "CommandExecution",
                "command": ["/bin/bash", "-lc", "python3 check.py"],
                "exit_code": 1,
                "aggregated_output": failed,
            },
            2,
        ),
        item(
            {
                "type": "FileChange",
                "status": "completed",
                "changes": {f"{cwd}/helper.py": {"type": "add"}},
            },
            3,
        ),
        item({"type": "HookPrompt", "fragments": [{"text": "Always record"}]}, 4),
        item(
            {
                "type": "CommandExecution",
                "command": ["/bin/bash", "-lc", "python3 check.py"],
                "exit_code": 0,
                "aggregated_output": "ok",
            },
            5,
        ),
    ]
    patch = "*** Begin Patch\n*** Add File: helper.py\n+OK = 1\n*** End Patch\n"
    older = [
        meta,
        codex_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context>"}],
            },
            1,
        ),
        codex_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": PROMPT}],
            },
            1,
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "a",
                "arguments": json.dumps({"command": ["bash", "-lc", "python3 check.py"]}),
            },
            2,
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "a",
                "output": json.dumps({"output": failed, "metadata": {"exit_code": 1}}),
            },
            3,
        ),
        codex_line(
            "response_item",
            {"type": "custom_tool_call", "name": "apply_patch", "call_id": "b", "input": patch},
            4,
        ),
        codex_line(
            "response_item",
            {"type": "custom_tool_call_output", "call_id": "b", "output": "Exit code: 0\nSuccess"},
            5,
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "c",
                "arguments": json.dumps({"cmd": "python3 check.py"}),
            },
            6,
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c",
                "output": "Process exited with code 0\nOutput:\nok",
            },
            7,
        ),
    ]
    for name, lines in (("new", newer), ("old", older)):
        path = jsonl(tmp_path / name / "sessions" / "2026" / "rollout-1.jsonl", lines)
        transcript = codex.read(path)
        assert transcript is not None and transcript.session == "c-1"
        found = [(f.kind, f.text, f.files) for f in drafts_of(transcript, cwd)]
        assert found == [("fix", FIXED, ["helper.py"]), ("instruction", RULE, [])], name


def test_a_session_outside_a_repository_names_none(tmp_path: Path) -> None:
    from agent_memory_client.history import history_drafts

    gone = Transcript("codex", "c-2", str(tmp_path / "deleted"), tmp_path / "x.jsonl")
    remote = Transcript("codex", "c-3", str(tmp_path / "deleted"), tmp_path / "y.jsonl",
                        remote="https://github.com/acme/web.git")  # fmt: skip
    plain = tmp_path / "plain"
    plain.mkdir()
    folder = Transcript("claude-code", "c-4", str(plain), tmp_path / "z.jsonl")
    for t in (gone, remote, folder):
        t.moments = claude_code.read(
            jsonl(tmp_path / "p" / f"{t.session}.jsonl", [claude_entry("user", PROMPT, 1, "")])
        ).moments  # type: ignore[union-attr]
    report = Report()
    drafts = list(history_drafts([gone, remote, folder], report))
    assert [d["source_repo"] for d in drafts] == ["acme/web"]
    assert (report.sessions, report.no_repository) == (3, 2)


@pytest.mark.skipif(not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code")
@pytest.mark.skipif(not CODEX.exists(), reason="no Codex CLI: ./scripts/agent-clients")
async def test_history_the_real_clients_wrote_becomes_drafts_once(
    served: str, db: asyncpg.Connection, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Claude Code session and a Codex session, each failing, changing a file, passing,
    with a user's rule in the prompt; the Codex prompt also holds a token."""
    repo = checkout(tmp_path / "checkout")
    claude_home, codex_dir = tmp_path / "claude-home", tmp_path / "codex-home"
    claude_home.mkdir()
    stub = StubModel()
    stub.tool_calls = failing_then_fixed(repo)
    async with serving(stub.app()) as model_url:
        await claude_run(repo, claude_home, model_url, served, "Bash", "Write", prompt=PROMPT)
    (repo / "helper.py").unlink()
    patch = "*** Begin Patch\n*** Add File: helper.py\n+OK = 'ok'\n*** End Patch\n"
    script = Script(
        steps=[
            ("exec_command", {"cmd": "python3 check.py"}),
            ("exec_command", {"cmd": f"apply_patch <<'EOF'\n{patch}EOF\n"}),
            ("exec_command", {"cmd": "python3 check.py"}),
        ]
    )
    leaked = f"Never print the deploy token {GITHUB_TOKEN} in logs."
    async with serving(responses_api(script)) as model_url:
        codex_home(codex_dir, model_url, served)
        await codex_run(repo, codex_dir, model_url, served, leaked)
    assert not stub.tool_calls and not script.steps
    # The live Claude Code session ended: the fix its hooks drafted waits in the queue.
    live = await db.fetch("SELECT client, text FROM drafts")
    assert [(r["client"], r["text"]) for r in live] == [("claude-code", FIXED)]
    await db.execute("TRUNCATE memories, memory_access, sessions, audit_log")
    where = ["--url", served, "--claude-dir", str(claude_home / ".claude"),
             "--codex-dir", str(codex_dir / ".codex")]  # fmt: skip
    assert await asyncio.to_thread(main, ["import-history", *where, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["sessions"] == 2 and first["drafts"] == {"fix": 2, "instruction": 2}
    # Both sessions' fixes are the text the live Claude Code session queued: known (one
    # lesson, one draft, whichever session showed it).
    assert (first["queued"], first["known"], first["refused"]) == (1, 2, 1)
    rows = await db.fetch("SELECT kind, client, text, files, source_repo FROM drafts ORDER BY text")
    found = {(r["kind"], r["client"], r["text"], tuple(r["files"]), r["source_repo"]) for r in rows}
    assert found == {
        ("fix", "claude-code", FIXED, ("helper.py",), "acme/api"),
        ("instruction", "claude-code", RULE, (), "acme/api"),
    }  # fmt: skip
    stored = await db.fetchval(
        "SELECT string_agg(text, ' ') || (SELECT coalesce(string_agg(detail::text, ' '), '')"
        " FROM audit_log) FROM drafts"
    )
    assert GITHUB_TOKEN not in stored
    assert await db.fetchval("SELECT count(*) FROM memories") == 0  # drafts, not memories
    # Again: nothing new.
    assert await asyncio.to_thread(main, ["import-history", *where, "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["queued"], second["known"], second["refused"]) == (0, 3, 1)
    assert await db.fetchval("SELECT count(*) FROM drafts") == 2
    # --repo, --since and --dry-run narrow and queue nothing.
    assert (
        await asyncio.to_thread(main, ["import-history", *where, "--dry-run", "--repo", "acme/web"])
        == 0
    )
    assert "2 of other repositories" in capsys.readouterr().out
    assert (
        await asyncio.to_thread(
            main, ["import-history", *where, "--dry-run", "--since", "2099-01-01", "--json"]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["would_queue"] == 0


async def test_a_draft_the_input_rules_refuse_is_left_out_and_the_rest_queued(
    served: str, db: asyncpg.Connection, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A transcript's text may hold what the server refuses (an invisible character): that
    draft is left out and said; the others of its call are queued. A coloured failure's
    escape sequences never reach a draft."""
    repo = checkout(tmp_path / "checkout")
    cwd = str(repo)
    coloured = "\x1b[31mModuleNotFoundError\x1b[0m: No module named 'helper'"
    steps = [
        claude_entry("user", "Never edit the generated\u200b files by hand.", 1, cwd),
        claude_entry("user", "Always run make lint before pushing.", 2, cwd),
        *fixed(cwd, coloured),
    ]
    jsonl(tmp_path / "claude" / "projects" / "x" / "s-1.jsonl", steps)
    argv = ["import-history", "--client", "claude-code", "--url", served,
            "--claude-dir", str(tmp_path / "claude"), "--json"]  # fmt: skip
    assert await asyncio.to_thread(main, argv) == 0
    done = json.loads(capsys.readouterr().out)
    assert (done["queued"], done["refused_by_rule"]) == (2, 1)
    texts = {r["text"] for r in await db.fetch("SELECT text FROM drafts")}
    assert texts == {"Always run make lint before pushing.", FIXED}
