"""The adapters against the payloads each client documents (Cursor, which cannot be
installed here, only so) or its real CLI sends (Copilot CLI 1.0.102's, as its hooks received
them), and `install` / `uninstall` against a client's own files."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from agent_memory_client import install as installer
from agent_memory_client.clients import CLIENTS, gemini
from agent_memory_client.clients.codex import patched_files
from agent_memory_client.clients.copilot import mcp_tool
from agent_memory_client.clients.gemini import users_prompt
from agent_memory_client.install import entries
from agent_memory_client.loop import CAPTURE_REMINDER, Answer
from agent_memory_client.shell import failed as shell_failed
from tests.helpers.git import checkout

# Cursor's hook input, as its hooks documentation gives each event (the common fields, and
# each event's own).
CURSOR_COMMON: dict[str, Any] = {
    "conversation_id": "c-1", "generation_id": "g-1", "model": "gpt-5",
    "cursor_version": "2.1.0", "workspace_roots": ["/work/repo"], "user_email": None,
    "transcript_path": None,
}  # fmt: skip
CURSOR: dict[str, dict[str, Any]] = {
    "sessionStart": {"session_id": "c-1", "is_background_agent": False, "composer_mode": "agent"},
    "beforeSubmitPrompt": {"prompt": "why does the upload test fail?", "attachments": []},
    "afterShellExecution": {
        "command": "pytest tests/x.py", "output": "E   ModuleNotFoundError: No module named 'y'\n"
        "FAILED tests/x.py::test_y", "duration": 1200, "sandbox": False,
    },
    "postToolUseFailure": {
        "tool_name": "Shell", "tool_input": {"command": "make itest"}, "tool_use_id": "t1",
        "cwd": "/work/repo", "error_message": "exit status 2", "failure_type": "error",
        "duration": 30, "is_interrupt": False,
    },
    "beforeReadFile": {"file_path": "/work/repo/app/db/pool.py", "content": "", "attachments": []},
    "afterFileEdit": {"file_path": "/work/repo/app/db/pool.py",
                      "edits": [{"old_string": "100", "new_string": "200"}]},
    "stop": {"status": "completed", "loop_count": 0},
    "sessionEnd": {"session_id": "c-1", "reason": "completed", "duration_ms": 5000,
                   "is_background_agent": False, "final_status": "completed"},
}  # fmt: skip


@pytest.mark.parametrize("hook", list(CURSOR))
def test_cursor_payloads_become_the_loops_events(hook: str) -> None:
    [event] = CURSOR_ADAPTER.events(
        hook, {**CURSOR_COMMON, "hook_event_name": hook, **CURSOR[hook]}
    )
    assert event.session == "c-1" and event.agent == "cursor"
    assert event.cwd == "/work/repo"
    expected = {
        "sessionStart": ("start", "", "", ""),
        "beforeSubmitPrompt": ("prompt", "why does the upload test fail?", "", ""),
        "afterShellExecution": (
            "failed",
            CURSOR["afterShellExecution"]["output"],
            "pytest tests/x.py",
            "",
        ),
        "postToolUseFailure": ("failed", "exit status 2", "make itest", ""),
        "beforeReadFile": ("read", "", "", "/work/repo/app/db/pool.py"),
        "afterFileEdit": ("edited", "", "", "/work/repo/app/db/pool.py"),
        "stop": ("stop", "", "", ""),
        "sessionEnd": ("end", "", "", ""),
    }[hook]
    assert (event.kind, event.text, event.command, event.path) == expected
    if hook == "afterFileEdit":
        assert event.change == "- 100\n+ 200"  # what a fix's draft shows it changed


CURSOR_ADAPTER = CLIENTS["cursor"]


def test_cursor_answers_in_its_own_shapes() -> None:
    render = CURSOR_ADAPTER.render
    context = Answer(context="Memories that may bear on this ...")
    assert render("sessionStart", context) == {"additional_context": context.context}
    assert render("postToolUse", context) == {"additional_context": context.context}
    # These hooks take no context: it waits for the next postToolUse (hooks.py).
    assert render("beforeSubmitPrompt", context) == {"continue": True}
    assert render("beforeReadFile", context) == {"permission": "allow"}
    assert render("stop", Answer(reminder="Before you finish")) == {
        "followup_message": "Before you finish"
    }
    assert render("stop", Answer()) is None
    assert set(CURSOR_ADAPTER.context_hooks) == {"sessionStart", "postToolUse"}


# Copilot CLI 1.0.102's hook input, as its camelCase hooks received it through the real CLI
# (the shell's status in the text; a failed command is a postToolUse too).
COPILOT_COMMON: dict[str, Any] = {"sessionId": "p-1", "timestamp": 1796673889032,
                                  "cwd": "/work/repo"}  # fmt: skip
FAILED_OUT = (
    "ModuleNotFoundError: No module named 'helper'\n<shellId: 0 completed with exit code 1>"
)
PASSED_OUT = "ok\n<shellId: 0 completed with exit code 0>"
COPILOT: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    ("sessionStart", {"source": "new", "initialPrompt": "why?"}, [("start", "", "", "")]),
    ("userPromptSubmitted", {"prompt": "why does the upload test fail?"},
     [("prompt", "why does the upload test fail?", "", "")]),
    ("postToolUse",
     {"toolName": "bash", "toolArgs": {"command": "python3 check.py", "description": "run"},
      "toolResult": {"resultType": "success", "textResultForLlm": FAILED_OUT}},
     [("failed", FAILED_OUT, "python3 check.py", "")]),
    ("postToolUse",
     {"toolName": "bash", "toolArgs": {"command": "python3 check.py"},
      "toolResult": {"resultType": "success", "textResultForLlm": PASSED_OUT}},
     [("ran", PASSED_OUT, "python3 check.py", "")]),
    # Left running (in the background, or past its wait): no outcome yet.
    ("postToolUse",
     {"toolName": "bash", "toolArgs": {"command": "pytest", "mode": "async"},
      "toolResult": {"resultType": "success",
                     "textResultForLlm": "<command started in background with shellId: 0>"}}, []),
    ("postToolUse",
     {"toolName": "bash", "toolArgs": {"command": "pytest"},
      "toolResult": {"resultType": "success", "textResultForLlm": "FAILED x\n<command with shellId:"
                     " 0 is still running after 30 seconds. The command is still running.>"}}, []),
    ("postToolUse",
     {"toolName": "view", "toolArgs": {"path": "/work/repo/check.py"},
      "toolResult": {"resultType": "success", "textResultForLlm": "import helper\n"}},
     [("read", "", "", "/work/repo/check.py")]),
    ("postToolUse",
     {"toolName": "edit", "toolArgs": {"path": "/work/repo/check.py", "old_str": "100",
                                       "new_str": "200"},
      "toolResult": {"resultType": "success", "textResultForLlm": "File updated with changes."}},
     [("edited", "", "", "/work/repo/check.py")]),
    ("postToolUse",
     {"toolName": "create", "toolArgs": {"path": "/work/repo/helper.py", "file_text": "OK = 1\n"},
      "toolResult": {"resultType": "success", "textResultForLlm": "Created file"}},
     [("edited", "", "", "/work/repo/helper.py")]),
    # A GPT-5 model's apply_patch: a freeform tool, its arguments the patch itself.
    ("postToolUse",
     {"toolName": "apply_patch",
      "toolArgs": "*** Begin Patch\n*** Update File: check.py\n@@\n-a\n+b\n*** End Patch\n",
      "toolResult": {"resultType": "success", "textResultForLlm": "Modified 1 file(s)"}},
     [("edited", "", "", "check.py")]),
    # Copilot's hooks reference gives `toolArgs` as the object written as a JSON string.
    ("postToolUse",
     {"toolName": "bash", "toolArgs": json.dumps({"command": "python3 check.py"}),
      "toolResult": {"resultType": "success", "textResultForLlm": FAILED_OUT}},
     [("failed", FAILED_OUT, "python3 check.py", "")]),
    ("postToolUse", {"toolName": "view", "toolArgs": '{"path": "/work/repo/check.py"}'},
     [("read", "", "", "/work/repo/check.py")]),
    # A search that printed the files' lines; one that printed their names alone reads none.
    ("postToolUse",
     {"toolName": "grep", "toolArgs": {"pattern": "x", "paths": ["/work/repo/app", "docs"],
                                       "output_mode": "content"}},
     [("searched", "", "", "/work/repo/app"), ("searched", "", "", "docs")]),
    ("postToolUse", {"toolName": "rg", "toolArgs": {"pattern": "x", "output_mode": "content"}},
     [("searched", "", "", "")]),
    ("postToolUse", {"toolName": "grep", "toolArgs": {"pattern": "x", "path": "/work/repo/app",
                                                      "output_mode": "content"}},
     [("searched", "", "", "/work/repo/app")]),
    ("postToolUse", {"toolName": "grep", "toolArgs": {"pattern": "x"}}, []),
    ("postToolUse", {"toolName": "glob", "toolArgs": {"pattern": "**/*.py"}}, []),
    ("agentStop",
     {"transcriptPath": "/home/u/.copilot/session-state/p-1/events.jsonl",
      "stopReason": "end_turn", "stop_hook_active": False}, [("stop", "", "", "")]),
    ("sessionEnd", {"reason": "complete"}, [("end", "", "", "")]),
]  # fmt: skip


@pytest.mark.parametrize(("hook", "fields", "expected"), COPILOT)
def test_copilot_payloads_become_the_loops_events(
    hook: str, fields: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    found = CLIENTS["copilot"].events(hook, {**COPILOT_COMMON, **fields})
    assert [(e.kind, e.text, e.command, e.path) for e in found] == expected
    assert all((e.session, e.agent, e.cwd) == ("p-1", "copilot-cli", "/work/repo") for e in found)
    if hook == "agentStop":  # a turn ended: the agent answered, in words no hook is given
        assert found[0].did_something and not found[0].continuing
    if fields.get("toolName") == "edit":
        assert found[0].change == "- 100\n+ 200"


def test_copilot_answers_in_its_own_shapes_and_hears_its_reminder_come_back() -> None:
    copilot = CLIENTS["copilot"]
    context = Answer(context="Memories that may bear on this ...")
    for hook in ("sessionStart", "userPromptSubmitted", "postToolUse"):
        assert copilot.render(hook, context) == {"additionalContext": context.context}
    assert copilot.render("sessionEnd", context) is None
    assert copilot.render("agentStop", Answer(reminder="Before you finish")) == {
        "decision": "block", "reason": "Before you finish",
    }  # fmt: skip
    assert copilot.render("agentStop", Answer()) is None
    # The reminder comes back as the next prompt: not the user's, nothing to recall on it.
    for reminder in CAPTURE_REMINDER.values():
        prompt = {**COPILOT_COMMON, "prompt": reminder + "\n\nDrafts from this session ..."}
        assert copilot.events("userPromptSubmitted", prompt) == []


def test_copilot_names_an_mcp_tool_server_dash_tool_and_hooks_only_what_it_reads() -> None:
    assert mcp_tool("github-mcp-server-get_issue") == ("github-mcp-server", "get_issue")
    assert mcp_tool("agent-memory-2-remember") == ("agent-memory-2", "remember")
    assert mcp_tool("bash") is None and mcp_tool("read_bash") is None
    [post] = [spec for spec in CLIENTS["copilot"].hooks if spec.event == "postToolUse"]
    assert post.matcher is not None
    hooked = re.compile(f"^(?:{post.matcher})$")  # as the CLI anchors it
    for tool in ("bash", "edit", "create", "view", "apply_patch", "grep", "rg", "web_fetch",
                 "web_search", "agent-memory-remember", "playwright-browser_navigate"):  # fmt: skip
        assert hooked.match(tool), tool
    for tool in ("glob", "task", "read_bash", "sql", "skill", "ask_user", "update_todo"):
        assert not hooked.match(tool), tool


def test_each_client_reads_a_passing_and_a_failing_command_apart() -> None:
    # No status known (Cursor's shell hook): what its last lines say.
    assert shell_failed("python3 x.py", "Traceback (most recent call last):\nValueError: bad", None)
    assert shell_failed("make itest", "make: *** [itest] Error 2", None)
    assert not shell_failed("pytest", "3 passed in 0.2s", None)
    gemini = CLIENTS["gemini"]
    failed = {"llmContent": "Output: boom\nExit Code: 1", "returnDisplay": "boom"}
    passed = {"llmContent": "Output: ok\nExit Code: 0", "returnDisplay": "ok"}
    for response, kind, text in ((failed, "failed", "boom"), (passed, "ran", "ok")):
        payload = {"session_id": "s", "cwd": "/r", "tool_name": "run_shell_command",
                   "tool_input": {"command": "make"}, "tool_response": response}  # fmt: skip
        [event] = gemini.events("AfterTool", payload)
        assert (event.kind, event.text) == (kind, text)
    assert users_prompt("<hook_context># memory\n</hook_context>\n\nfix it") == "fix it"


def test_a_codex_patch_names_every_file_it_changes() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: app/a.py\n@@\n-x\n+y\n*** Add File: docs/b.md\n"
        "+hello\n*** Delete File: old.txt\n*** End Patch\n"
    )
    assert patched_files(patch) == ["app/a.py", "docs/b.md", "old.txt"]
    [edit_a, edit_b, _] = CLIENTS["codex"].events(
        "PostToolUse",
        {"session_id": "s", "cwd": "/r", "tool_name": "apply_patch",
         "tool_input": {"command": patch}, "tool_response": "Success"},
    )  # fmt: skip
    assert (edit_a.kind, edit_a.path, edit_b.path) == ("edited", "app/a.py", "docs/b.md")
    # The same patch through the shell (a model not offered the tool): edits, not a run.
    through_shell = CLIENTS["codex"].events(
        "PostToolUse",
        {"session_id": "s", "cwd": "/r", "tool_name": "exec_command",
         "tool_input": {"cmd": f"apply_patch <<'EOF'\n{patch}EOF\n"}, "tool_response": "ok"},
    )  # fmt: skip
    assert [(e.kind, e.path) for e in through_shell] == [
        ("edited", "app/a.py"), ("edited", "docs/b.md"), ("edited", "old.txt")
    ]  # fmt: skip


def test_codex_ends_the_memory_session_at_a_stop_it_does_not_hold() -> None:
    """Codex has no SessionEnd: its Stop is the loop's stop, then its end (hooks.py skips
    the end when the stop reminds the agent, which then goes on)."""
    stop = {"session_id": "s", "cwd": "/r", "last_assistant_message": "Done.",
            "stop_hook_active": False}  # fmt: skip
    kinds = [(e.kind, e.text) for e in CLIENTS["codex"].events("Stop", stop)]
    assert kinds == [("stop", "Done."), ("end", "Done.")]


# ---- install and uninstall --------------------------------------------------------------

THEIRS = {
    "claude-code": (".claude/settings.json",
                    '{"permissions": {"allow": ["Bash(make:*)"]},\n "hooks": {"Stop": [{"hooks":'
                    ' [{"type": "command", "command": "notify-send done"}]}]}}'),
    "codex": (".codex/hooks.json",
              '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo hi"}]}]}}'),
    "gemini": (".gemini/settings.json",
               '{\n  "security": {"auth": {"selectedType": "gemini-api-key"}},\n'
               '  "mcpServers": {"github": {"command": "gh-mcp"}}\n}'),
    "cursor": (".cursor/hooks.json",
               '{"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}'),
}  # fmt: skip


@pytest.mark.parametrize("client", list(THEIRS))
def test_install_merges_and_uninstall_puts_every_file_back_byte_for_byte(
    client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no codex here: trust is left to the user
    monkeypatch.delenv("AGENT_MEMORY_CODEX", raising=False)
    relative, text = THEIRS[client]
    theirs = tmp_path / relative
    theirs.parent.mkdir(parents=True)
    theirs.write_text(text)
    codex_config = tmp_path / ".codex" / "config.toml"
    if client == "codex":
        codex_config.write_text('model = "o3"\n[projects."/x"]\ntrust_level = "trusted"')
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    said = installer.install(client)
    assert any(line.startswith(("created:", "updated:")) for line in said)
    config = json.loads(theirs.read_text())
    ours = [h["command"] for groups in config["hooks"].values() for g in groups
            for h in g.get("hooks", [g]) if entries.is_ours(h["command"])]  # fmt: skip
    assert len(ours) == len(CLIENTS[client].hooks)
    # Theirs is kept beside ours.
    for key, value in json.loads(text).items():
        if key not in ("hooks", "mcpServers"):
            assert config[key] == value
    for name, server in json.loads(text).get("mcpServers", {}).items():
        assert config["mcpServers"][name] == server
    for event, groups in json.loads(text).get("hooks", {}).items():
        assert all(group in config["hooks"][event] for group in groups)
    if client == "codex":
        toml = tomllib.loads(codex_config.read_text())
        assert toml["model"] == "o3" and toml["projects"]["/x"]["trust_level"] == "trusted"
        assert toml["mcp_servers"]["agent-memory"]["args"][-3:] == ["mcp", "--tools", "agent"]
        assert any("not yet trusted" in line for line in said)
    written = {
        p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "state" not in p.parts
    }

    assert all(line.startswith("unchanged:") for line in installer.install(client)
               if ":" in line and not line.startswith("not yet"))  # fmt: skip
    again = {
        p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "state" not in p.parts
    }
    assert again == written  # installing twice changes nothing the second time

    installer.uninstall(client)
    after = {
        p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "state" not in p.parts
    }
    assert after == before


def test_uninstall_after_the_user_changed_the_file_removes_only_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    installer.install("cursor")
    hooks_file = tmp_path / ".cursor" / "hooks.json"
    config = json.loads(hooks_file.read_text())
    config["hooks"]["stop"].append({"command": "./after-install.sh"})
    hooks_file.write_text(json.dumps(config))
    installer.uninstall("cursor")
    assert json.loads(hooks_file.read_text()) == {
        "version": 1,
        "hooks": {"stop": [{"command": "./after-install.sh"}]},
    }
    assert not (tmp_path / ".cursor" / "mcp.json").exists()  # install created it


def test_install_refuses_a_file_it_cannot_read_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text("{not json")
    with pytest.raises(installer.InstallError, match="is not JSON"):
        installer.install("cursor")
    assert not (tmp_path / ".cursor" / "hooks.json").exists()


def test_the_claude_code_plugin_declares_the_adapters_hooks() -> None:
    plugin = Path(__file__).parents[2] / "integrations" / "claude-code" / "hooks" / "hooks.json"
    declared = json.loads(plugin.read_text())["hooks"]
    for spec in CLIENTS["claude-code"].hooks:
        [group] = declared[spec.event]
        assert group.get("matcher") == spec.matcher
        assert group["hooks"][0]["command"].endswith(f" hook {spec.hook}")


def test_the_gemini_extension_declares_the_adapters_hooks_and_the_bridge() -> None:
    extension = Path(__file__).parents[2] / "integrations" / "gemini"
    hooks = json.loads((extension / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks == gemini.hook_settings(["agent-memory-client"])
    manifest = json.loads((extension / "gemini-extension.json").read_text())
    server = manifest["mcpServers"]["agent-memory"]
    assert server["args"] == ["mcp", "--tools", "agent"]
    assert set(server["env"]) == set(entries.BRIDGE_ENV)
    # The guidance on what to capture: the Claude Code plugin's skill, loaded on demand
    # (a context file would cost every request, and say nothing of the capture mode).
    # A copy, not a link: Gemini CLI copies an extension it installs, links and all.
    skill = Path("skills") / "capturing-learnings" / "SKILL.md"
    plugin = extension.parent / "claude-code"
    assert (extension / skill).read_text() == (plugin / skill).read_text()
    assert "contextFileName" not in manifest


async def test_cursor_hands_what_its_read_hook_recalled_at_the_next_tool(
    served: str, db: asyncpg.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """beforeReadFile takes no context: a file's memories wait for postToolUse, once;
    the same file read again recalls nothing. (The memory is a month old, so that the
    snapshot, which hands the week's decisions, does not hand it first.)"""
    import asyncio

    import httpx

    from agent_memory_client.hooks import run_hook

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = checkout(tmp_path / "repo")
    memory = {"content": "pool.py sets hnsw.ef_search per connection", "memory_type": "decision",
              "source_repo": "acme/api", "files": ["app/db/pool.py"]}  # fmt: skip
    async with httpx.AsyncClient(base_url=served) as http:
        assert (await http.post("/memories", json=memory)).status_code == 201
    await db.execute("UPDATE memories SET created_at = now() - interval '30 days'")

    def hook(event: str, **fields: Any) -> tuple[str, str]:
        payload = {**CURSOR_COMMON, "workspace_roots": [str(repo)], "hook_event_name": event,
                   **fields}  # fmt: skip
        return run_hook("cursor", event, json.dumps(payload), served)

    started, _ = await asyncio.to_thread(hook, "sessionStart", session_id="c-1")
    assert "additional_context" in json.loads(started)
    read = {"file_path": str(repo / "app" / "db" / "pool.py"), "content": ""}
    out, note = await asyncio.to_thread(hook, "beforeReadFile", **read)
    assert json.loads(out) == {"permission": "allow"} and "memories recalled" in note
    out, _ = await asyncio.to_thread(hook, "postToolUse", tool_name="Read", tool_input={})
    context = json.loads(out)["additional_context"]
    assert context.startswith("Memories about this file") and memory["content"] in context
    out, _ = await asyncio.to_thread(hook, "postToolUse", tool_name="Read", tool_input={})
    assert out == ""  # handed once
    out, note = await asyncio.to_thread(hook, "beforeReadFile", **read)
    assert "nothing to recall" in note  # once a file a session


STARTS = {"claude-code": "session-start", "codex": "SessionStart", "gemini": "SessionStart",
          "cursor": "sessionStart", "copilot": "sessionStart"}  # fmt: skip


@pytest.mark.parametrize("client", list(STARTS))
def test_with_the_server_down_every_client_starts_told_so_and_every_hook_passes(
    client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_memory_client.hooks import run_hook

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    down = "http://127.0.0.1:9"
    payload = {"session_id": "s", "conversation_id": "s", "sessionId": "s", "cwd": str(tmp_path)}
    out, note = run_hook(client, STARTS[client], json.dumps(payload), down)
    assert "continuing without memory" in note and "Connection refused" in note
    assert "agent-memory unavailable" in json.dumps(json.loads(out))
    for spec in CLIENTS[client].hooks:  # every other hook: nothing said to the model
        out, note = run_hook(client, spec.hook, json.dumps(payload), down)
        assert note.startswith("agent-memory")
        assert spec.hook == STARTS[client] or "unavailable" not in out
    out, note = run_hook(client, STARTS[client], "not json", down)
    assert out == "" and "unreadable hook input" in note


def test_a_server_url_of_another_scheme_is_refused_by_every_client_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One rule for where the server is, in the hooks and in the server's own CLI."""
    from agent_memory_client.connection import Unavailable, server_url
    from agent_memory_client.hooks import run_hook
    from app.client import MemoryClient

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert server_url("localhost:8080/") == "http://localhost:8080"
    out, note = run_hook("codex", "SessionStart", '{"session_id": "s"}', "ftp://example.org")
    assert "must start with http:// or https://" in note and "unavailable" in out
    with pytest.raises(Unavailable, match="must start with http://"):
        MemoryClient("ftp://example.org")


async def test_a_hook_that_cannot_keep_its_state_still_exits_0(served: str, tmp_path: Path) -> None:
    """A cache folder that is a file (or a full disk): the hook says so in one line, and
    the agent goes on."""
    import asyncio
    import os
    import sys

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    env = {**os.environ, "AGENT_MEMORY_URL": served, "XDG_CACHE_HOME": str(blocked),
           "AGENT_MEMORY_REPO": "acme/api"}  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent_memory_client", "hook", "--client", "codex", "SessionStart",
        env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path)}).encode()
    out, err = await asyncio.wait_for(process.communicate(payload), 60)
    assert process.returncode == 0
    assert (
        len(err.decode().strip().splitlines()) == 1 and "continuing without memory" in err.decode()
    )
    assert "unavailable" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


# Untrusted input (client/agent_memory_client/provenance.py): each client's documented
# payload for a web tool, another MCP server's tool and a shell download, and this
# server's own tools, which bring nothing from outside.
PAGE = "https://docs.example.com/setup"
FETCHES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    ("claude-code", "post-tool-use",
     {"tool_name": "WebFetch", "tool_input": {"url": PAGE, "prompt": "how to set up"}}, [PAGE]),
    ("claude-code", "post-tool-use",
     {"tool_name": "WebSearch", "tool_input": {"query": "acme setup"}}, ["search:acme setup"]),
    ("claude-code", "post-tool-use",
     {"tool_name": "mcp__github__get_issue", "tool_input": {"issue_number": 7}},
     ["tool:mcp__github__get_issue"]),
    ("claude-code", "post-tool-use",
     {"tool_name": "Bash", "tool_input": {"command": f"curl -s {PAGE}"}}, [PAGE]),
    ("claude-code", "post-tool-use",
     {"tool_name": "mcp__plugin_agent-memory_memory__remember", "tool_input": {}}, []),
    # A browser's page is its URL; the user's own dev server's is none.
    ("codex", "PostToolUse",
     {"tool_name": "mcp__browser__navigate", "tool_input": {"url": PAGE}}, [PAGE]),
    ("codex", "PostToolUse",
     {"tool_name": "mcp__playwright__browser_navigate",
      "tool_input": {"url": "http://localhost:5173/"}}, []),
    ("codex", "PostToolUse",
     {"tool_name": "Bash", "tool_input": {"command": "gh issue view 12"},
      "tool_response": "title: setup"}, ["gh issue view 12"]),
    # gh's writes and a fetch of the user's own app bring no one else's words.
    ("codex", "PostToolUse",
     {"tool_name": "Bash", "tool_input": {"command": "gh pr create --title t --body 'see"
      " https://docs.example.com/x'"}, "tool_response": "https://github.com/a/b/pull/1"}, []),
    ("claude-code", "post-tool-use",
     {"tool_name": "Bash", "tool_input": {"command": "curl -s localhost:8080/healthz"}}, []),
    # A third-party server that happens to be called memory is another server.
    ("claude-code", "post-tool-use",
     {"tool_name": "mcp__memory__read_graph", "tool_input": {}}, ["tool:mcp__memory__read_graph"]),
    ("claude-code", "post-tool-use", {"tool_name": "AskUserQuestion", "tool_input": {}}, []),
    ("codex", "PostToolUse", {"tool_name": "mcp__agent-memory__remember", "tool_input": {}}, []),
    ("gemini", "AfterTool",
     {"tool_name": "web_fetch", "tool_input": {"prompt": f"summarise {PAGE}"}}, [PAGE]),
    ("gemini", "AfterTool",
     {"tool_name": "google_web_search", "tool_input": {"query": "acme"}}, ["search:acme"]),
    ("gemini", "AfterTool",
     {"tool_name": "mcp_github_get_issue", "tool_input": {},
      "mcp_context": {"server_name": "github", "tool_name": "get_issue"}},
     ["tool:github/mcp_github_get_issue"]),
    ("gemini", "AfterTool",
     {"tool_name": "mcp_agent-memory_remember", "tool_input": {},
      "mcp_context": {"server_name": "agent-memory", "tool_name": "remember"}}, []),
    ("gemini", "AfterTool",
     {"tool_name": "run_shell_command", "tool_input": {"command": f"wget -qO- {PAGE}"},
      "tool_response": {"llmContent": "Output: ok\nExit Code: 0"}}, [PAGE]),
    ("cursor", "afterMCPExecution",
     {"tool_name": "browser_navigate", "tool_input": {"url": PAGE}, "result_json": "{}",
      "duration": 10}, [PAGE]),
    ("cursor", "afterMCPExecution",
     {"tool_name": "remember", "tool_input": {"text": "x"}, "result_json": "{}"}, []),
    ("cursor", "afterShellExecution",
     {"command": f"curl -fsSL {PAGE} -o setup.md", "output": "", "duration": 5}, [PAGE]),
    # Copilot CLI names an MCP tool `<server>-<tool>`.
    ("copilot", "postToolUse", {"toolName": "web_fetch", "toolArgs": {"url": PAGE}}, [PAGE]),
    ("copilot", "postToolUse",
     {"toolName": "web_search", "toolArgs": {"query": "acme setup"}}, ["search:acme setup"]),
    ("copilot", "postToolUse",
     {"toolName": "github-mcp-server-get_issue", "toolArgs": {"issue_number": 7}},
     ["tool:github-mcp-server/get_issue"]),
    ("copilot", "postToolUse",
     {"toolName": "github-mcp-server-create_issue", "toolArgs": {"title": "x"}}, []),
    ("copilot", "postToolUse",
     {"toolName": "playwright-browser_navigate", "toolArgs": {"url": PAGE}}, [PAGE]),
    ("copilot", "postToolUse", {"toolName": "agent-memory-remember", "toolArgs": {}}, []),
    ("copilot", "postToolUse",
     {"toolName": "bash", "toolArgs": {"command": f"curl -s {PAGE}"},
      "toolResult": {"resultType": "success",
                     "textResultForLlm": "<html>\n<shellId: 0 completed with exit code 0>"}},
     [PAGE]),
]  # fmt: skip


@pytest.mark.parametrize(("client", "hook", "payload", "sources"), FETCHES)
def test_untrusted_input_becomes_a_fetched_event(
    client: str, hook: str, payload: dict[str, Any], sources: list[str]
) -> None:
    common = CURSOR_COMMON if client == "cursor" else {"session_id": "s", "cwd": "/r"}
    events = CLIENTS[client].events(hook, {**common, "hook_event_name": hook, **payload})
    fetched = [event.sources for event in events if event.kind == "fetched"]
    assert fetched == ([tuple(sources)] if sources else [])
    # The read comes first: it is recorded even when what follows fails.
    if fetched:
        assert events[0].kind == "fetched"


def test_every_client_hooks_the_tools_that_bring_untrusted_input() -> None:
    matchers = {
        name: " ".join(spec.matcher or "*" for spec in adapter.hooks)
        for name, adapter in CLIENTS.items()
    }
    assert "WebFetch" in matchers["claude-code"] and "mcp__.*" in matchers["claude-code"]
    assert "mcp__.*" in matchers["codex"]
    assert "web_fetch" in matchers["gemini"] and "mcp_.*" in matchers["gemini"]
    assert "afterMCPExecution" in {spec.event for spec in CLIENTS["cursor"].hooks}
    assert "web_fetch" in matchers["copilot"] and ".+-.+" in matchers["copilot"]


async def test_a_session_that_fetched_a_page_holds_what_it_writes(
    served: str, db: asyncpg.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the hooks as Claude Code runs them: the fetch is recorded once with the
    session, the lesson written after it waits for a person, and the session's own recall
    still hands it (marked), which another session's does not."""
    import asyncio

    import httpx

    from agent_memory_client.hooks import run_hook

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = checkout(tmp_path / "repo")

    def hook(event: str, session: str, **fields: Any) -> tuple[str, str]:
        payload = {"session_id": session, "cwd": str(repo), "hook_event_name": event, **fields}
        return run_hook("claude-code", event, json.dumps(payload), served)

    await asyncio.to_thread(hook, "session-start", "c-1")
    fetch = {"tool_name": "WebFetch", "tool_input": {"url": PAGE}}
    _, note = await asyncio.to_thread(hook, "post-tool-use", "c-1", **fetch)
    assert "untrusted input noted" in note
    _, note = await asyncio.to_thread(hook, "post-tool-use", "c-1", **fetch)
    assert "noted" in note and "untrusted" not in note  # each source once
    assert await db.fetchval("SELECT sources FROM sessions") == [PAGE]
    lesson = {"content": "The setup guide says the fixtures live in tests/data/big",
              "source_repo": "acme/api"}  # fmt: skip
    async with httpx.AsyncClient(base_url=served) as http:
        stored = (await http.post("/memories", json=lesson)).json()["memory"]
    assert stored["held_at"] is not None and stored["provenance"]["sources"] == [PAGE]
    prompt = {"prompt": "where do the big fixtures live in tests/data?"}
    out, _ = await asyncio.to_thread(hook, "user-prompt-submit", "c-1", **prompt)
    own = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert lesson["content"] in own and "held-for-review" in own and PAGE in own
    started, _ = await asyncio.to_thread(hook, "session-start", "c-2")
    assert lesson["content"] not in started
    out, _ = await asyncio.to_thread(hook, "user-prompt-submit", "c-2", **prompt)
    assert lesson["content"] not in out


def test_an_edit_s_change_is_read_in_every_client_that_shows_it() -> None:
    """A fix's draft shows what changed: the old lines and the new, from each client's own
    field names (Claude Code's one pair or MultiEdit's list, Gemini's `replace`)."""
    claude = CLIENTS["claude-code"].events(
        "post-tool-use",
        {"session_id": "s", "cwd": "/r", "tool_name": "MultiEdit", "tool_input": {
            "file_path": "/r/a.py",
            "edits": [{"old_string": "x = 1", "new_string": "x = 2"},
                      {"old_string": "y", "new_string": "z"}]}},
    )  # fmt: skip
    gemini = CLIENTS["gemini"].events(
        "AfterTool",
        {"session_id": "s", "cwd": "/r", "hook_event_name": "AfterTool", "tool_name": "replace",
         "tool_input": {"file_path": "/r/a.py", "old_string": "x = 1", "new_string": "x = 2"}},
    )  # fmt: skip
    assert [e.change for e in claude if e.kind == "edited"] == ["- x = 1\n+ x = 2\n- y\n+ z"]
    assert [e.change for e in gemini if e.kind == "edited"] == ["- x = 1\n+ x = 2"]


def test_every_kind_of_moment_a_hook_meets_has_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search of a clone and a browser's page read are moments of their own (searched,
    browsed): a hook that meets one answers like any other, with the server down too."""
    from agent_memory_client.hooks import BUDGET_S, run_hook
    from agent_memory_client.loop import KINDS

    assert set(BUDGET_S) == set(KINDS)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    searched = {
        "session_id": "s",
        "cwd": str(tmp_path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Grep",
        "tool_input": {"pattern": "token", "path": "/tmp/clone/src", "output_mode": "content"},
        "tool_response": {"content": 'src/a.go:3: token := os.Getenv("T")'},
    }
    _, note = run_hook("claude-code", "post-tool-use", json.dumps(searched), "http://127.0.0.1:9")
    assert note.startswith("agent-memory") and "error" not in note.lower()
