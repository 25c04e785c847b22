"""`agent-memory import-history`: past sessions of every client become drafts by the rules
the live hooks run (drafting/'s fix tracker), the user's own rules, and the project's
conventions; filed under the session's repository (never a folder's name), with the
untrusted input read before. Each class of miss and false alarm met in the real sessions of
the development corpus (../shared/data/sessions, bench/capture.py) has a test here named by
that session's id, over a transcript written for the test in that client's format (the
corpus's text is never copied). Over transcripts the real clients wrote (against a stub
model), a second run queues nothing and a secret is never stored."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from agent_memory_client.history import Report, Transcript, claude_code, codex, history_drafts
from agent_memory_client.history.capture import drafts_of
from agent_memory_client.history.clues import repository_from
from agent_memory_client.history.formats import client_of, read_any
from agent_memory_client.history.instructions import instruction_of, instructions_of
from agent_memory_client.history.repository import Namer, parse_maps
from agent_memory_client.provenance import command_sources, outsider, tool_sources
from agent_memory_client.shell import error_lines, failed, same_work
from app.cli import main
from tests.conftest import serving
from tests.helpers.agent_clients import CLAUDE, CODEX, claude_run, codex_home, codex_run
from tests.helpers.credentials import GITHUB_TOKEN
from tests.helpers.git import checkout
from tests.helpers.model_stubs import Script, StubModel, failing_then_fixed, responses_api
from tests.helpers.transcripts import (
    call,
    claude,
    claude_entry,
    codex_line,
    function_call,
    function_output,
    jsonl,
)

FIXED = (
    "`python3 check.py` failed with: ModuleNotFoundError: No module named 'helper'. Fixed by"
    " changing helper.py; `python3 check.py` passes."
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
    "ok. refactors of internal helpers are never breaking changes, only config behaviour is": True,
    "I don't want to commit the generated docs folder": True,
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
    "Never do that again.": False,  # about what the agent just did: not understood alone
    "don't make any changes yet, just explain what the loop does": False,
    "we dont want to waste time on the intro screen": False,
    # Beep206__CyberVPN 67edd8f2, dayhaysoos__nimbus 30bfbb6f: a task's scope, given bare
    "Don't touch the billing/ or deploy/ folders": False,
    "Do not change api/schema.py by hand, it is generated from the proto files": True,
}


def test_the_instruction_rule_on_labelled_prompts() -> None:
    found = {prompt: instruction_of(prompt) is not None for prompt in LABELLED}
    assert found == LABELLED
    rule = instruction_of(PROMPT)
    assert rule is not None and rule.text == RULE


def test_a_long_briefs_rules_are_its_rules_section_not_its_task() -> None:
    """EntityProcess__agentv c3f091b3 and Beep206__CyberVPN 39d5e4d9: briefs of thousands
    of characters, pasted as a prompt, whose rules stand in a section of their own."""
    brief = "\n".join(
        [
            "# Task: move the sync worker to the new queue",
            "",
            "Never stop the old worker before the new one has drained.",
            "",  # the task's own
            *[f"- step {n}: port the {n}th handler and run its tests" for n in range(1, 80)],
            "",
            "## Rules",
            "- Never force-push to a shared branch; open a new one instead.",
            "- Use `pnpm` for every install and script.",
            "- step 90: review the result",
            "",
            "## Deliverables",
            "- a PR against main",
        ]
    )
    assert len(brief) > 2_000
    rules = [r.text for r in instructions_of(brief)]
    assert rules == [
        "Never force-push to a shared branch; open a new one instead.",
        "Use `pnpm` for every install and script.",
    ]


def test_a_users_answer_and_their_reason_for_refusing_a_call_are_their_own_words() -> None:
    """JanDeDobbeleer__oh-my-posh 6c0a282a (AskUserQuestion), bishwajit-sharma101__memoriant
    542cadcf (an ask_user answer), entireio__cli 7f78a542 (a refused call with a reason)."""
    answered = (
        'User has answered your questions: "Which config renders the hero?"="Always render'
        ' the built-in default config there, never a theme". You can now continue.'
    )
    rule = instruction_of(answered, answer=True)
    assert rule is not None and rule.text.startswith("Always render the built-in default")
    copilot = json.dumps(
        {"answers": {"0": "Go ahead. Never change the schema without showing me the SQL first."}}
    )
    rule = instruction_of(copilot, answer=True)
    assert rule is not None and rule.text.startswith("Never change the schema")
    cwd = "/home/dev/api"
    refused = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg."
        " if it was a file edit, the new_string was NOT written to the file). To tell you how"
        " to proceed, the user said:\nmake sure every issue goes in the Platform project"
    )
    steps = [*call(1, "mcp__tracker__create_issue", {"title": "x"}, refused, cwd, failed=True)]
    transcript = claude_code.read(jsonl(Path("/tmp") / "refused-test" / "s.jsonl", steps))
    assert transcript is not None
    [found] = drafts_of(transcript, None, "acme/api")
    assert (found.kind, found.text) == (
        "instruction",
        "Make sure every issue goes in the Platform project",
    )


def fixed(cwd: str, error: str, check: str = "python3 check.py") -> list[dict[str, Any]]:
    """A command fails with `error`, the agent writes helper.py, the command passes."""
    return [
        *call(1, "Bash", {"command": "python3 check.py"}, error, cwd, failed=True),
        *call(3, "Write", {"file_path": f"{cwd}/helper.py", "content": "OK = 1"}, "ok", cwd),
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
        # A retry that passes with nothing changed: no lesson.
        *call(5, "Bash", {"command": "make lint"}, "Error: E501", cwd, failed=True),
        *call(6, "Bash", {"command": "make lint"}, "ok", cwd),
        {"type": "api-request-blob", "message": {"role": "user", "content": "Always copy"}},
    ]
    found = drafts_of(claude(tmp_path, steps), cwd)
    fix = (
        "`python3 check.py` failed with: ModuleNotFoundError: No module named 'helper'. Fixed by"
        " changing helper.py; `python3 check.py -q` passes."
    )
    assert [(f.kind, f.text, f.files, f.sources) for f in found] == [
        ("fix", fix, ["helper.py"], ["https://example.com/fix"]),
        ("instruction", RULE, [], []),
    ]
    assert found[0].seen_at == "2026-10-01T10:00:41Z"
    assert found[0].evidence == {
        "error": "ModuleNotFoundError: No module named 'helper'",
        "failed": "python3 check.py",
        "change": "helper.py",
        "command": "python3 check.py -q",
    }
    assert found[0].anchors == ["t1", "t3", "t4"]


def test_a_runners_summary_is_not_the_error() -> None:
    """EntityProcess__agentv 019ed99c: a test run ends with its runner's summary ("Ran 5
    tests across 1 file. [15.12s]"); the failing assertion is the error."""
    output = "\n".join(
        [
            "src/a.test.ts:",
            "(fail) parses a header [1.2ms]",
            "error: expect(received).toBe(expected)",
            "Expected: 3",
            "Received: 2",
            "",
            " 4 pass",
            " 1 fail",
            "Ran 5 tests across 1 file. [15.12s]",
        ]
    )
    assert error_lines(output) == "error: expect(received).toBe(expected)\nExpected: 3\nReceived: 2"


def test_a_cancelled_parallel_call_is_no_failure(tmp_path: Path) -> None:
    """Beep206__CyberVPN 8eb235e9: eight of nine errors were calls the client cancelled
    when a parallel sibling failed."""
    cwd = str(tmp_path)
    cancelled = "<tool_use_error>Sibling tool call errored</tool_use_error>"
    steps = [
        *call(1, "Bash", {"command": "npm test"}, cancelled, cwd, failed=True),
        *call(2, "Write", {"file_path": f"{cwd}/package.json", "content": "{}"}, "ok", cwd),
        *call(3, "Bash", {"command": "npm test"}, "ok", cwd),
    ]
    transcript = claude(tmp_path, steps)
    assert [m.event.kind for m in transcript.moments] == ["edited", "ran"]
    assert drafts_of(transcript, cwd) == []


def test_a_failure_a_pipe_into_tail_hid_is_seen(tmp_path: Path) -> None:
    """FSM1__cipher-box 71b7117f: `pnpm test | tail -20` exits 0 while its tests fail; the
    fix (a build of another package first) is a lesson."""
    cwd = str(tmp_path)
    failing = "FAIL src/app.test.ts\nError: Cannot find module '@acme/crypto'\n 1 failed"
    assert failed("pnpm --filter web test 2>&1 | tail -20", failing, 0)
    assert not failed("pnpm --filter web test", failing, 0)  # no pipe: its status is its own
    steps = [
        *call(1, "Bash", {"command": "pnpm --filter web test 2>&1 | tail -20"}, failing, cwd),
        *call(2, "Bash", {"command": "pnpm --filter @acme/crypto build"}, "built", cwd),
        *call(3, "Bash", {"command": "pnpm --filter web test 2>&1 | tail -5"}, "5 passed", cwd),
    ]
    [found] = drafts_of(claude(tmp_path, steps), cwd)
    assert found.text == (
        "`pnpm --filter web test 2>&1 | tail -20` failed with: Error: Cannot find module"
        " '@acme/crypto'. Fixed by running `pnpm --filter @acme/crypto build`;"
        " `pnpm --filter web test 2>&1 | tail -5` passes."
    )


def test_a_fix_made_by_running_an_install(tmp_path: Path) -> None:
    """EntityProcess__agentv 019ed99c: a new worktree has no dependencies; the lint fails
    until an install runs, and no file changes."""
    cwd = str(tmp_path)
    missing = "$ biome check .\n/usr/bin/bash: line 1: biome: command not found"
    steps = [
        *call(1, "Bash", {"command": "bun run lint"}, missing, cwd, failed=True),
        *call(2, "Bash", {"command": "bun install"}, "installed 300 packages", cwd),
        *call(3, "Bash", {"command": "bun run lint"}, "Checked 120 files", cwd),
    ]
    [found] = drafts_of(claude(tmp_path, steps), cwd)
    assert found.text == (
        "`bun run lint` failed with: /usr/bin/bash: line 1: biome: command not found. Fixed by"
        " running `bun install`; `bun run lint` passes."
    )
    assert found.evidence["change"] == "ran `bun install`"


def test_the_same_work_is_the_whole_command_not_its_first_two_words() -> None:
    """`bun run lint` passing is no `bun run test` fixed; the same work through pipes,
    redirects, `cd` and an environment prefix is."""
    assert not same_work("bun run test", "bun run lint")
    assert same_work("bun run test", "cd web && CI=1 bun run test 2>&1 | tail -20")
    assert same_work("go test ./pkg/x/... -run TestA", "CGO_ENABLED=0 go test ./pkg/x/...")
    assert not same_work("pytest tests/a.py", "pytest tests/b.py")
    assert same_work("pytest -q", "cd api\npytest -q")  # a line break ends a command


def test_an_error_of_the_code_being_written_is_the_task(tmp_path: Path) -> None:
    """entireio__cli 08940314: most failures were compile and test errors in the files the
    session was writing; editing them until they pass is the task, not a lesson."""
    cwd = str(tmp_path)
    steps = [
        *call(1, "Write", {"file_path": f"{cwd}/pkg/ids.go", "content": "package pkg"}, "ok", cwd),
        *call(
            2,
            "Bash",
            {"command": "go build ./pkg/"},
            "pkg/ids.go:9:2: undefined: uuid",
            cwd,
            failed=True,
        ),
        *call(
            3,
            "Edit",
            {"file_path": f"{cwd}/pkg/ids.go", "old_string": "a", "new_string": "b"},
            "ok",
            cwd,
        ),
        *call(4, "Bash", {"command": "go build ./pkg/"}, "", cwd),
        # A test of this session's failing, fixed in the code it tests: the task too.
        *call(
            5,
            "Bash",
            {"command": "go test ./pkg/"},
            "--- FAIL: TestIDs (0.00s)\n    ids_test.go:12: got 2, want 3",
            cwd,
            failed=True,
        ),
        *call(
            6,
            "Edit",
            {"file_path": f"{cwd}/pkg/count.go", "old_string": "1", "new_string": "2"},
            "ok",
            cwd,
        ),
        *call(7, "Bash", {"command": "go test ./pkg/"}, "ok", cwd),
    ]
    assert drafts_of(claude(tmp_path, steps), cwd) == []


def test_a_command_written_wrongly_is_drafted_as_written_rightly(tmp_path: Path) -> None:
    """bishwajit-sharma101__memoriant 58a66375: Windows PowerShell refuses `&&`; written
    with `;` the same command passed. The lesson is the command, not the edit between."""
    cwd = str(tmp_path)
    refused = "At line:1 char:11\n+ cd client && npm install x\nThe token '&&' is not a valid"
    refused += " statement separator in this version.\n+ CategoryInfo : ParserError: (:) []"
    steps = [
        *call(1, "Bash", {"command": "cd client && npm install x"}, refused, cwd, failed=True),
        *call(2, "Write", {"file_path": f"{cwd}/client/.env.local", "content": "A=1"}, "ok", cwd),
        *call(3, "Bash", {"command": "cd client ; npm install x"}, "added 1 package", cwd),
    ]
    [found] = drafts_of(claude(tmp_path, steps), cwd)
    assert found.text.startswith("`cd client && npm install x` fails with: The token '&&' is")
    assert found.text.endswith("Written as `cd client ; npm install x`, it works.")


def test_a_commit_hooks_rule_is_a_lesson(tmp_path: Path) -> None:
    """FSM1__cipher-box 71b7117f: the pre-commit hook's linter refused a Markdown file
    this session wrote; fixing the file is what the hook's rule asks, so it is drafted."""
    cwd = str(tmp_path)
    commit = (
        "git add notes/todo.md && git commit -m \"$(cat <<'EOF'\ndocs: add a todo\n\nWhy.\nEOF\n)\""
    )
    hook = (
        "notes/todo.md:10 error MD001/heading-increment Heading levels should only"
        " increment by one level at a time\nhusky - pre-commit script failed (code 1)"
    )
    steps = [
        *call(1, "Write", {"file_path": f"{cwd}/notes/todo.md", "content": "# a"}, "ok", cwd),
        *call(2, "Bash", {"command": commit}, hook, cwd, failed=True),
        *call(
            3,
            "Edit",
            {"file_path": f"{cwd}/notes/todo.md", "old_string": "### P", "new_string": "## P"},
            "ok",
            cwd,
        ),
        *call(4, "Bash", {"command": commit}, "[main 1a2b3c] docs: add a todo", cwd),
    ]
    [found] = drafts_of(claude(tmp_path, steps), cwd)
    assert found.text.startswith(
        '`git add notes/todo.md && git commit -m "…"` failed with: notes/todo.md:10 error'
        " MD001/heading-increment"
    )
    assert "changing notes/todo.md (- ### P + ## P)" in found.text.replace("\n", " ")


def test_a_subagents_web_read_is_seen(tmp_path: Path) -> None:
    """Beep206__CyberVPN efac6393: the web searches were a subagent's, recorded in the
    session's `progress` entries; codyborders__pup-mcp 311dfedb cloned another's repository
    there."""
    cwd = str(tmp_path)

    def progress(n: int, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "progress",
            "sessionId": "s-1",
            "cwd": cwd,
            "timestamp": "t",
            "data": {"type": "agent_progress", "message": message},
        }

    use = {"type": "tool_use", "id": "sub1", "name": "WebSearch", "input": {"query": "vpn sdk"}}
    done = {"type": "tool_result", "tool_use_id": "sub1", "content": "results"}
    clone = {
        "type": "tool_use",
        "id": "sub2",
        "name": "Bash",
        "input": {"command": "cd /tmp && git clone https://github.com/other/lib.git"},
    }
    cloned = {"type": "tool_result", "tool_use_id": "sub2", "content": "Cloning into 'lib'..."}
    steps = [
        claude_entry("user", "research the vpn sdks", 1, cwd),
        progress(
            2, {"type": "assistant", "message": {"role": "assistant", "content": [use, clone]}}
        ),
        progress(3, {"type": "user", "message": {"role": "user", "content": [done, cloned]}}),
    ]
    transcript = claude(tmp_path, steps)
    reads = [
        (m.anchor, m.event.sources, m.sub) for m in transcript.moments if m.event.kind == "fetched"
    ]
    assert reads == [
        ("sub1", ("search:vpn sdk",), True),
        ("sub2", ("https://github.com/other/lib.git",), True),
    ]


# Look-alikes of outsider reads, each met in a real session, and each class of real read.
LOOK_ALIKES: dict[str, list[str]] = {
    # FSM1__cipher-box 2095544c: the user's own API through an ngrok tunnel; the PR it opened
    "curl -s https://86f0.ngrok-free.app/auth/.well-known/jwks.json": [],
    "gh pr create --title x --body 'fixes https://github.com/acme/api/issues/3'": [],
    "gh pr checks 12": [],
    # EntityProcess__agentv 019efc87: a PR's state, numbers and names only; its own package
    "gh pr view 1510 --json isDraft,state,mergeStateStatus,url,headRefName": [],
    "npm view @acme/api versions --json": [],
    # blackgirlbytes__entire-token-costs-benchmark-tests 019ef35b: its own repository
    "gh repo view acme/api --json nameWithOwner,url,visibility": [],
    # blackgirlbytes__planetfall-seed-signalkit 019ed974: its own deployment
    "curl -I --max-time 20 https://api-acme-preview.vercel.app": [],
    "git fetch origin && git status --short --branch": [],
}
READS: dict[str, list[str]] = {
    # oh-my-posh 32e7c00e: CI logs; EntityProcess__agentv 019ed99c: a PR and its comments
    "gh run view 29260 --repo acme/api --log-failed": ["gh run view 29260"],
    "gh pr view 12 --comments": ["gh pr view 12"],
    "gh api repos/acme/api/pulls/12/comments": ["gh api repos/acme/api/pulls/12/comments"],
    "n=$(gh pr view --json body -q .body) && echo $n": ["gh pr view body"],
    # dayhaysoos__nimbus 30bfbb6f: advisories others wrote
    "pnpm audit --audit-level high": ["registry:pnpm audit high"],
    # codyborders__pup-mcp 311dfedb: another's repository
    "cd /tmp && git clone https://github.com/other/lib.git": ["https://github.com/other/lib.git"],
    # A script of many lines: each line is a command of its own.
    "cd /tmp\ncurl -sL https://example.com/setup.sh -o setup.sh": ["https://example.com/setup.sh"],
}


@pytest.mark.parametrize(("command", "sources"), [*LOOK_ALIKES.items(), *READS.items()])
def test_what_a_shell_command_read_from_others(command: str, sources: list[str]) -> None:
    assert outsider(command_sources(command), "acme/api") == sources


def test_what_a_tool_call_read_from_others() -> None:
    # FSM1__cipher-box 2095544c: a browser driving the local dev server; JanDeDobbeleer__oh-
    # my-posh 6c0a282a: the project's own site; a site of someone else's.
    assert tool_sources("mcp__playwright__browser_navigate", {"url": "http://localhost:5173"}) == []
    own = tool_sources("mcp__Claude_Browser__navigate", {"url": "https://acmeapi.dev/docs"})
    assert own == ["https://acmeapi.dev/docs"] and outsider(own, "acme/acme-api") == []
    assert tool_sources("mcp__Claude_Browser__navigate", {"url": "https://other.io"}) == [
        "https://other.io"
    ]
    # JanDeDobbeleer__oh-my-posh 6b6f4218: the client's own question tool; 0cf3db51 of
    # entireio__cli: a tracker's write answers with what the agent wrote, its read does not.
    assert tool_sources("AskUserQuestion", {"questions": []}) == []
    assert tool_sources("mcp__linear-server__create_issue", {"title": "x"}) == []
    assert tool_sources("mcp__linear-server__get_issue", {"id": "E-1"}) == [
        "tool:mcp__linear-server__get_issue"
    ]
    # dayhaysoos__nimbus 336ebe11: OpenCode's code search is a web tool.
    assert tool_sources("codesearch", {"query": "sandbox api"}) == ["search:sandbox api"]


def test_pasted_web_results_are_an_outsiders_text(tmp_path: Path) -> None:
    """computermode__test-repo 13e662e2: Cursor records text alone; the web results it
    injects into a prompt are read."""
    injected = (
        "<external_links>\n### Potentially Relevant Websearch Results\n\nWebsite URL:"
        " https://github.com/other/tool/pull/7\nWebsite Content: ...\n</external_links>\n"
        "review the change in that pull request"
    )
    path = jsonl(
        tmp_path / "c.jsonl",
        [{"role": "user", "message": {"content": [{"type": "text", "text": injected}]}}],
    )
    assert client_of(path) == "cursor"
    transcript = read_any(path)
    assert transcript is not None
    assert [(m.event.kind, m.event.sources or m.event.text) for m in transcript.moments] == [
        ("fetched", ("https://github.com/other/tool/pull/7",)),
        ("prompt", "review the change in that pull request"),
    ]


def test_codex_rollouts_of_every_shell_tool_replay_alike(tmp_path: Path) -> None:
    """Codex's `exec_command` (a command still running ends in a later `write_stdin`'s
    output: EntityProcess__agentv 019ed99c), Codex Desktop's `shell_command`, and the older
    `shell` with its status in a JSON object."""
    cwd = str(tmp_path / "repo")
    meta = codex_line(
        "session_meta",
        {"id": "c-1", "cwd": cwd, "git": {"repository_url": "git@github.com:acme/api.git"}},
        0,
    )
    error = "ModuleNotFoundError: No module named 'helper'"
    patch = "*** Begin Patch\n*** Add File: helper.py\n+OK = 1\n*** End Patch\n"
    edit = codex_line(
        "response_item",
        {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p", "input": patch},
        5,
    )
    edited = codex_line(
        "response_item",
        {"type": "custom_tool_call_output", "call_id": "p", "output": "Exit code: 0\nSuccess"},
        6,
    )
    prompt = codex_line("event_msg", {"type": "user_message", "message": PROMPT}, 1)
    running = [
        meta,
        prompt,
        function_call("exec_command", {"cmd": "python3 check.py"}, "a", 2),
        function_output("Chunk ID: 1\nProcess running with session ID 77\nOutput:\n", "a", 3),
        function_call("write_stdin", {"session_id": 77, "chars": ""}, "b", 4),
        function_output(f"Process exited with code 1\nOutput:\n{error}", "b", 4),
        edit,
        edited,
        function_call("exec_command", {"cmd": "python3 check.py"}, "c", 7),
        function_output("Process exited with code 0\nOutput:\nok", "c", 8),
    ]
    desktop = [
        meta,
        prompt,
        function_call("shell_command", {"command": "python3 check.py", "workdir": cwd}, "a", 2),
        function_output(f"Exit code: 1\nWall time: 0.1 seconds\nOutput:\n{error}", "a", 3),
        edit,
        edited,
        function_call("shell_command", {"command": "python3 check.py"}, "c", 7),
        function_output("Exit code: 0\nOutput:\nok", "c", 8),
    ]
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
        function_call("shell", {"command": ["bash", "-lc", "python3 check.py"]}, "a", 2),
        function_output(json.dumps({"output": error, "metadata": {"exit_code": 1}}), "a", 3),
        edit,
        edited,
        function_call("shell", {"command": ["bash", "-lc", "python3 check.py"]}, "c", 7),
        function_output(json.dumps({"output": "ok", "metadata": {"exit_code": 0}}), "c", 8),
    ]
    for name, lines in (("running", running), ("desktop", desktop), ("older", older)):
        transcript = codex.read(jsonl(tmp_path / name / "rollout-1.jsonl", lines))
        assert transcript is not None and transcript.session == "c-1"
        assert repository_from(transcript.clues)[0] == "acme/api"
        found = [(f.kind, f.text) for f in drafts_of(transcript, cwd)]
        assert found == [
            (
                "fix",
                "`python3 check.py` failed with: ModuleNotFoundError: No module named"
                " 'helper'. Fixed by changing helper.py (+OK = 1); `python3 check.py` passes.",
            ),
            ("instruction", RULE),
        ], name


def test_gemini_copilot_and_opencode_sessions_are_read(tmp_path: Path) -> None:
    """The development corpus's other clients: Gemini CLI's JSON lines (records that repeat
    as they change), Copilot CLI's events, an `opencode export`."""
    error = "Error: Cannot find module 'dotenv'"
    gemini: list[dict[str, Any]] = [
        {"sessionId": "g-1", "projectHash": "h", "startTime": "t"},
        {"id": "m1", "type": "user", "content": [{"text": PROMPT}], "timestamp": "t1"},
        {
            "$set": {
                "messages": [
                    {"id": "m1", "type": "user", "content": [{"text": PROMPT}], "timestamp": "t1"},
                    {
                        "id": "m2",
                        "type": "gemini",
                        "timestamp": "t2",
                        "toolCalls": [
                            {
                                "id": "c1",
                                "name": "run_shell_command",
                                "args": {"command": "npm test"},
                                "status": "success",
                                "result": [
                                    {
                                        "functionResponse": {
                                            "response": {"output": f"Output: {error}\nExit Code: 1"}
                                        }
                                    }
                                ],
                            },
                            {
                                "id": "c2",
                                "name": "run_shell_command",
                                "args": {"command": "npm install"},
                                "status": "success",
                                "result": [
                                    {
                                        "functionResponse": {
                                            "response": {"output": "Output: added 1\nExit Code: 0"}
                                        }
                                    }
                                ],
                            },
                            {
                                "id": "c3",
                                "name": "run_shell_command",
                                "args": {"command": "npm test"},
                                "status": "success",
                                "result": [
                                    {
                                        "functionResponse": {
                                            "response": {"output": "Output: ok\nExit Code: 0"}
                                        }
                                    }
                                ],
                            },
                        ],
                    },
                ]
            }
        },
    ]
    copilot = [
        {
            "type": "session.start",
            "id": "e0",
            "data": {"sessionId": "k-1", "context": {"cwd": "/w", "repository": "acme/api"}},
        },
        {"type": "user.message", "id": "e1", "data": {"content": PROMPT}},
        {
            "type": "tool.execution_start",
            "data": {"toolCallId": "c1", "toolName": "bash", "arguments": {"command": "npm test"}},
        },
        {
            "type": "tool.execution_complete",
            "data": {
                "toolCallId": "c1",
                "success": True,
                "result": {"content": f"{error}\n<shellId: 1 completed with exit code 1>"},
            },
        },
        {
            "type": "tool.execution_start",
            "data": {
                "toolCallId": "c2",
                "toolName": "bash",
                "arguments": {"command": "npm install"},
            },
        },
        {
            "type": "tool.execution_complete",
            "data": {
                "toolCallId": "c2",
                "success": True,
                "result": {"content": "added 1\n<shellId: 2 completed with exit code 0>"},
            },
        },
        {
            "type": "tool.execution_start",
            "data": {"toolCallId": "c3", "toolName": "bash", "arguments": {"command": "npm test"}},
        },
        {
            "type": "tool.execution_complete",
            "data": {
                "toolCallId": "c3",
                "success": True,
                "result": {"content": "ok\n<shellId: 3 completed with exit code 0>"},
            },
        },
    ]

    def bash(n: int, command: str, output: str, code: int) -> dict[str, Any]:
        return {
            "type": "tool",
            "callID": f"c{n}",
            "id": f"p{n}",
            "tool": "bash",
            "state": {
                "status": "completed",
                "input": {"command": command},
                "output": output,
                "metadata": {"exit": code},
                "time": {"start": 1_773_620_868_000 + n},  # milliseconds, as OpenCode writes
            },
        }

    opencode = {
        "info": {"id": "o-1", "directory": "/w"},
        "messages": [
            {"info": {"role": "user"}, "parts": [{"type": "text", "id": "p0", "text": PROMPT}]},
            {
                "info": {"role": "assistant"},
                "parts": [
                    bash(1, "npm test", error, 1),
                    bash(2, "npm install", "added 1", 0),
                    bash(3, "npm test", "ok", 0),
                ],
            },
        ],
    }
    jsonl(tmp_path / "g.jsonl", gemini)
    jsonl(tmp_path / "k.jsonl", copilot)
    with gzip.open(tmp_path / "o.json.gz", "wt") as out:
        json.dump(opencode, out, indent=2)
    expected = [
        (
            "fix",
            "`npm test` failed with: Error: Cannot find module 'dotenv'. Fixed by running"
            " `npm install`; `npm test` passes.",
        ),
        ("instruction", RULE),
    ]
    for name, client in (
        ("g.jsonl", "gemini-cli"),
        ("k.jsonl", "copilot-cli"),
        ("o.json.gz", "opencode"),
    ):
        assert client_of(tmp_path / name) == client
        transcript = read_any(tmp_path / name)
        assert transcript is not None and transcript.client == client
        assert [(f.kind, f.text) for f in drafts_of(transcript, None)] == expected, name
    opened = read_any(tmp_path / "o.json.gz")
    assert opened is not None  # its times as ISO 8601, which `seen_at` and `--since` read
    assert opened.moments[-1].at == "2026-03-16T00:27:48.003000+00:00"


def named_session(session: str, cwd: str, moments: list[dict[str, Any]], path: Path) -> Transcript:
    found = claude_code.read(
        jsonl(path / f"{session}.jsonl", [{**e, "sessionId": session} for e in moments])
    )
    assert found is not None
    return found


def test_a_session_whose_folder_is_gone_is_named_by_what_its_transcript_records(
    tmp_path: Path,
) -> None:
    """entireio__cli 7f78a542 (push output), FSM1__cipher-box 2095544c (a pr-link entry),
    and JanDeDobbeleer__oh-my-posh 94fab1a1 (nothing of its own: another session of its
    folder names it); a worktree's session inherits its checkout's. Never a folder's name."""
    gone = "/Users/dev/work/api"
    pushed = named_session(
        "pushed",
        gone,
        [
            *call(
                1,
                "Bash",
                {"command": "git push"},
                "To github.com:acme/api.git\n   a..b  x -> x",
                gone,
            ),
        ],
        tmp_path,
    )
    linked = named_session(
        "linked",
        "/Users/dev/box",
        [
            claude_entry("user", "ship it", 1, "/Users/dev/box"),
            {
                "type": "pr-link",
                "sessionId": "linked",
                "prNumber": 3,
                "prUrl": "https://github.com/acme/box/pull/3",
                "prRepository": "acme/box",
            },
        ],
        tmp_path,
    )
    silent = named_session("silent", gone, [claude_entry("user", "fix it", 1, gone)], tmp_path)
    worktree = named_session(
        "worktree",
        f"{gone}/.worktrees/2",
        [claude_entry("user", "fix it", 1, f"{gone}/.worktrees/2")],
        tmp_path,
    )
    nowhere = named_session(
        "nowhere",
        "/Users/dev/scratch",
        [claude_entry("user", "fix it", 1, "/Users/dev/scratch")],
        tmp_path,
    )
    report = Report()
    drafts = list(history_drafts([silent, worktree, nowhere, pushed, linked], report))
    assert drafts == []  # nothing to learn in these: what is measured is the naming
    assert (report.sessions, report.no_repository) == (5, 1)
    [left] = report.left_out
    assert (left.session, left.reason) == (
        "nowhere",
        (
            "its folder is gone and its transcript names no repository (map it: --map"
            " PATH=owner/name)"
        ),
    )
    namer = Namer()
    assert [namer.name(t)[0] for t in (pushed, linked, silent, worktree, nowhere)] == [
        "acme/api",
        "acme/box",
        "acme/api",
        "acme/api",
        None,
    ]
    # The person's own map, its longest prefix first, Windows paths as Windows writes them.
    mapped = Namer(
        parse_maps(
            ["/Users/dev=acme/all", "/Users/dev/scratch=acme/scratch", "D:\\oh-my-posh=jan/posh"]
        )
    )
    assert mapped.name(nowhere)[0] == "acme/scratch"
    assert mapped.mapped("d:/oh-my-posh/src") == "jan/posh"
    # A Cursor transcript records no folder: its file's folder is mapped instead.
    projects = "/Users/dev/.cursor/projects/Users-dev-web"
    cursor = Transcript("cursor", "c-1", "", Path(f"{projects}/agent-transcripts/c-1.jsonl"))
    assert Namer().name(cursor)[2].startswith("its transcript records no folder")
    assert Namer(parse_maps([f"{projects}=acme/web"])).name(cursor)[0] == "acme/web"
    with pytest.raises(ValueError, match="PATH=owner/name"):
        parse_maps(["/Users/dev"])


def test_a_repositorys_conventions_from_all_of_its_sessions(tmp_path: Path) -> None:
    """entireio__cli: every session ran the same mise tasks; FSM1__cipher-box: its commits
    follow Conventional Commits and go in through pull requests. One draft each, across
    sessions; a bare tool run (`go test ./...`) is no convention."""
    cwd = str(tmp_path)
    first = named_session(
        "a",
        cwd,
        [
            *call(1, "Bash", {"command": "mise run test 2>&1 | tail -5"}, "ok", cwd),
            *call(2, "Bash", {"command": "go test ./..."}, "ok", cwd),
            *call(
                3, "Bash", {"command": "git commit -m 'feat(cli): add a flag'"}, "[x 1a] ok", cwd
            ),
        ],
        tmp_path,
    )
    second = named_session(
        "b",
        cwd,
        [
            *call(1, "Bash", {"command": "mise run lint"}, "ok", cwd),
            *call(2, "Bash", {"command": "mise run test"}, "ok", cwd),
            *call(3, "Bash", {"command": "git checkout -b fix/flag-name"}, "ok", cwd),
            *call(
                4, "Bash", {"command": "git commit -m 'fix(cli): name the flag'"}, "[x 2b] ok", cwd
            ),
            *call(
                5,
                "Bash",
                {"command": "gh pr create --base main --fill"},
                "https://github.com/acme/api/pull/9",
                cwd,
            ),
        ],
        tmp_path,
    )
    report = Report()
    drafts = list(history_drafts([first, second], report, name_of=lambda t: ("acme/api", None, "")))
    assert [(d["kind"], d["text"]) for d in drafts] == [
        (
            "convention",
            "In acme/api, the project's own commands check the work (tests: `mise run"
            " test`; lint and types: `mise run lint`).",
        ),
        (
            "convention",
            "In acme/api, commit messages follow Conventional Commits, `type(scope):"
            " subject` (as in `feat(cli): add a flag`).",
        ),
        (
            "convention",
            "In acme/api, changes go in through a pull request from a branch such as"
            " `fix/flag-name`, opened with `gh pr create` against `main`.",
        ),
    ]
    assert report.drafts == {"fix": 0, "instruction": 0, "convention": 3}


def test_one_lesson_is_one_draft_across_sessions(tmp_path: Path) -> None:
    """The same failure fixed the same way in two sessions, and the same rule said in two:
    one draft each (its key), the first session's."""
    cwd = str(tmp_path)
    sessions = [
        named_session(
            name,
            cwd,
            [
                claude_entry("user", PROMPT, 1, cwd),
                *fixed(cwd, "ModuleNotFoundError: No module named 'helper'"),
            ],
            tmp_path,
        )
        for name in ("one", "two")
    ]
    report = Report()
    drafts = list(history_drafts(sessions, report, name_of=lambda t: ("acme/api", None, "")))
    assert [(d["kind"], d["client_session"]) for d in drafts] == [
        ("fix", "one"),
        ("instruction", "one"),
    ]
    assert drafts[0]["key"] == "fix|python3 check.py|modulenotfounderror: no module named"


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
    where = [
        "--url",
        served,
        "--claude-dir",
        str(claude_home / ".claude"),
        "--codex-dir",
        str(codex_dir / ".codex"),
        "--gemini-dir",
        str(tmp_path / "none"),
        "--copilot-dir",
        str(tmp_path / "none"),
    ]
    assert await asyncio.to_thread(main, ["import-history", *where, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["sessions"] == 2
    assert first["drafts"] == {"fix": 1, "instruction": 2, "convention": 0}
    # One lesson (the same failure, the same fix) in both sessions: one draft, its key the
    # live session's too, so known. The Codex rule held a token: left out.
    assert (first["queued"], first["known"], first["refused"]) == (1, 1, 1)
    rows = await db.fetch("SELECT kind, client, text, files, source_repo FROM drafts ORDER BY text")
    found = {(r["kind"], r["client"], r["text"], tuple(r["files"]), r["source_repo"]) for r in rows}
    assert found == {
        ("fix", "claude-code", FIXED, ("helper.py",), "acme/api"),
        ("instruction", "claude-code", RULE, (), "acme/api"),
    }
    stored = await db.fetchval(
        "SELECT string_agg(text || evidence::text, ' ') || (SELECT coalesce(string_agg("
        "detail::text, ' '), '') FROM audit_log) FROM drafts"
    )
    assert GITHUB_TOKEN not in stored
    assert await db.fetchval("SELECT count(*) FROM memories") == 0  # drafts, not memories
    # Again: nothing new.
    assert await asyncio.to_thread(main, ["import-history", *where, "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["queued"], second["known"], second["refused"]) == (0, 2, 1)
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


async def test_files_of_any_client_and_a_persons_map(
    served: str, db: asyncpg.Connection, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--file` reads a transcript of any client (gzipped too), `--map` names a folder that
    is gone, and a session still unnamed is said with its reason; each draft carries its
    evidence and key to the queue. A transcript's text may hold what the server refuses (an
    invisible character): that draft is left out and said; the others are queued."""
    gone = "/Users/dev/gone/api"
    steps = [
        claude_entry("user", "Never edit the generated\u200b files by hand.", 1, gone),
        claude_entry("user", "Always run make lint before pushing.", 2, gone),
        *fixed(gone, "\x1b[31mModuleNotFoundError\x1b[0m: No module named 'helper'"),
    ]
    mapped = tmp_path / "mapped.jsonl.gz"
    with gzip.open(mapped, "wt") as out:
        out.write("".join(json.dumps({**e, "sessionId": "m-1"}) + "\n" for e in steps))
    lost = jsonl(
        tmp_path / "lost.jsonl",
        [
            {
                **claude_entry(
                    "user", "Always run make lint before pushing.", 1, "/Users/dev/lost"
                ),
                "sessionId": "l-1",
            }
        ],
    )
    argv = [
        "import-history",
        "--url",
        served,
        "--file",
        str(mapped),
        "--file",
        str(lost),
        "--map",
        f"{gone}=acme/api",
    ]
    assert await asyncio.to_thread(main, argv) == 0
    said = capsys.readouterr().out
    assert 'left out: claude-code l-1 in "/Users/dev/lost": its folder is gone' in said
    assert "queued 2" in said and "for another input rule 1" in said
    rows = await db.fetch("SELECT kind, text, evidence, key FROM drafts ORDER BY kind")
    assert [(r["kind"], r["text"]) for r in rows] == [
        ("fix", FIXED),
        ("instruction", "Always run make lint before pushing."),
    ]
    assert json.loads(rows[0]["evidence"])["error"] == (
        "ModuleNotFoundError: No module named 'helper'"  # escapes never reach a draft
    )
    assert rows[0]["key"].startswith("fix|python3 check.py|")
