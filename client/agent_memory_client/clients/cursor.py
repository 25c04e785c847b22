"""Cursor (hooks.json, version 1, in ~/.cursor or <repo>/.cursor), against the payloads its
hooks documentation gives (Cursor cannot be installed here; tests/cli/test_clients.py holds
the adapter to them).

- The session is `conversation_id` (`session_id` at sessionStart, which is the same).
- Context reaches the model at sessionStart (`additional_context`) and after a tool
  (postToolUse's `additional_context`); beforeSubmitPrompt, beforeReadFile and
  afterFileEdit cannot carry any, so what they recall waits for the next postToolUse.
- A shell command's end is afterShellExecution, with its output alone; a failure is read
  from the output's last lines, or comes as postToolUseFailure (`error_message`).
- stop's `followup_message` is the reminder, sent as the agent's next message.
"""

from __future__ import annotations

from agent_memory_client.clients.base import (
    Adapter,
    HookSpec,
    RuleFiles,
    at,
    change_of,
    shell_call,
    text_of,
    tool_call,
    tool_input_of,
)
from agent_memory_client.loop import Answer, Event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from agent_memory_client.install.files import ConfigFile

NAME = "cursor"


def events(hook: str, payload: dict[str, Any]) -> list[Event]:
    roots = payload.get("workspace_roots")
    root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else ""
    session = payload.get("conversation_id") or payload.get("session_id") or ""
    base = Event(
        "start",
        session=str(session), agent=NAME,
        cwd=text_of(payload.get("cwd")) or root,
        transcript=text_of(payload.get("transcript_path")) or None,
    )  # fmt: skip
    tool_input = tool_input_of(payload)
    if hook == "sessionStart":
        return [at(base, "start")]
    if hook == "beforeSubmitPrompt":
        return [at(base, "prompt", text=text_of(payload.get("prompt")))]
    if hook == "afterShellExecution":
        command, output = text_of(payload.get("command")), text_of(payload.get("output"))
        return shell_call(base, command, output, None)  # Cursor reports no exit status
    if hook == "afterMCPExecution":  # any MCP server's tool: its names carry no prefix
        tool = text_of(payload.get("tool_name"))
        return tool_call(base, tool, tool_input, mcp=True)
    if hook == "postToolUseFailure" and payload.get("tool_name") == "Shell":
        command = text_of(tool_input.get("command"))
        return shell_call(base, command, text_of(payload.get("error_message")), 1)
    if hook == "beforeReadFile":
        return [at(base, "read", path=text_of(payload.get("file_path")))]
    if hook == "afterFileEdit":
        path = text_of(payload.get("file_path"))
        return [at(base, "edited", path=path, change=change_of(payload))]
    if hook == "stop":
        done = payload.get("status") == "completed"
        return [at(base, "stop", did_something=done)]
    if hook == "sessionEnd":
        return [at(base, "end", reason=text_of(payload.get("reason")))]
    if hook == "postToolUse":  # a web tool's use; else nothing of its own: what waits
        tool = text_of(payload.get("tool_name"))
        return [*tool_call(base, tool, tool_input), at(base, "idle")]
    return []


def render(hook: str, answer: Answer) -> dict[str, Any] | None:
    if hook == "stop":
        return {"followup_message": answer.reminder} if answer.reminder else None
    if hook == "beforeSubmitPrompt":
        return {"continue": True}
    if hook == "beforeReadFile":
        return {"permission": "allow"}
    if answer.context and hook in ("sessionStart", "postToolUse"):
        return {"additional_context": answer.context}
    return None


def config_files(project: Path | None) -> list[ConfigFile]:
    """hooks.json (version 1) and mcp.json in ~/.cursor or the project's .cursor; the
    server is handed the bridge's variables as `${env:NAME}`."""
    from pathlib import Path

    from agent_memory_client.install.entries import hook_entries, mcp_server
    from agent_memory_client.install.files import JsonFile, McpEntry
    from agent_memory_client.ours import SERVER_NAME

    folder = (project or Path.home()) / ".cursor"
    hooks = hook_entries(ADAPTER, lambda command: {"command": command, "timeout": 5})
    server = McpEntry(SERVER_NAME, mcp_server(env="${{env:{name}}}"))
    return [
        JsonFile(folder / "hooks.json", hooks=hooks, empty=(("version", 1),)),
        JsonFile(folder / "mcp.json", server=server),
    ]


ADAPTER = Adapter(
    name=NAME,
    alias="cursor",
    label="Cursor",
    # Its agent transcripts are read when given (`import-history --file`): no folder.
    reader="agent_memory_client.history.cursor",
    install=config_files,
    home=None,
    distiller=None,
    repository_rules=(RuleFiles("Cursor rules", (".cursor/rules/**/*.mdc", ".cursorrules")),),
    hooks=(
        HookSpec("sessionStart"),
        HookSpec("beforeSubmitPrompt"),
        HookSpec("afterShellExecution"),
        HookSpec("postToolUseFailure", "Shell"),
        HookSpec("postToolUse"),
        HookSpec("afterMCPExecution"),
        HookSpec("beforeReadFile"),
        HookSpec("afterFileEdit"),
        HookSpec("stop"),
        HookSpec("sessionEnd"),
    ),
    events=events,
    render=render,
    context_hooks=frozenset({"sessionStart", "postToolUse"}),
)
