"""Gemini CLI (0.61): hooks in settings.json (user or project) or an extension's
hooks/hooks.json; input and output as its hooks reference gives them.

- BeforeAgent is the prompt; AfterAgent the end of a turn (`prompt_response` its last words;
  `decision: deny` with a reason sends the reminder as the agent's next prompt).
- AfterTool reports every tool; `run_shell_command` with `tool_response.error` (or an exit
  code other than 0 in what the model reads) is a failure.
- SessionEnd is best effort (the CLI does not wait for it): the last words are kept at
  every AfterAgent, so a session ended there is still recorded with them.
"""

from __future__ import annotations

import re

from agent_memory_client.clients.base import (
    Adapter,
    Distiller,
    Home,
    HookSpec,
    RuleFiles,
    at,
    change_of,
    claude_shaped,
    session_of,
    shell_call,
    text_of,
    tool_call,
    tool_input_of,
)
from agent_memory_client.loop import Answer, Event
from agent_memory_client.shell import exit_code_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from agent_memory_client.history.distill import Headless
    from agent_memory_client.install.files import ConfigFile

NAME = "gemini-cli"

EDITING_TOOLS = frozenset({"replace", "write_file", "edit"})
READING_TOOLS = frozenset({"read_file"})
SEARCH_TOOLS = frozenset({"grep_search", "search_file_content"})  # the second: before 0.5x
# In a run with -p, the start's context comes back at the head of BeforeAgent's prompt.
_HOOK_CONTEXT = re.compile(r"\A\s*<hook_context>.*?</hook_context>\s*", re.DOTALL)


def users_prompt(prompt: str) -> str:
    return _HOOK_CONTEXT.sub("", prompt)


def shell_result(response: Any) -> tuple[str, int]:
    """A shell call's output as it printed it (`returnDisplay`; `llmContent` wraps it in
    the CLI's own lines, among them its `Exit Code:`) and its status: an error is 1."""
    if not isinstance(response, dict):
        return "", 0
    wrapped = text_of(response.get("llmContent"))
    error = response.get("error")
    message = text_of(error.get("message")) if isinstance(error, dict) else text_of(error)
    code = exit_code_in(wrapped)
    code = code if code is not None else (1 if error else 0)
    return text_of(response.get("returnDisplay")) or wrapped or message, code


def read_path(tool_input: dict[str, Any]) -> str:
    return text_of(tool_input.get("file_path") or tool_input.get("absolute_path"))


def searched_path(tool_input: dict[str, Any]) -> str:
    """The folder a search read the files of (the working folder by default)."""
    return text_of(tool_input.get("dir_path") or tool_input.get("path"))


def events(hook: str, payload: dict[str, Any]) -> list[Event]:
    base = session_of(payload, NAME)
    tool = payload.get("tool_name")
    tool_input = tool_input_of(payload)
    if hook == "SessionStart":
        return [at(base, "start")]
    if hook == "BeforeAgent":
        return [at(base, "prompt", text=users_prompt(text_of(payload.get("prompt"))))]
    if hook == "AfterTool" and tool == "run_shell_command":
        command = text_of(tool_input.get("command"))
        output, code = shell_result(payload.get("tool_response"))
        return shell_call(base, command, output, code)
    if hook == "AfterTool" and tool in READING_TOOLS:
        return [at(base, "read", path=read_path(tool_input))]
    if hook == "AfterTool" and tool in SEARCH_TOOLS:
        return [at(base, "searched", path=searched_path(tool_input))]
    if hook == "AfterTool" and tool in EDITING_TOOLS:
        path = text_of(tool_input.get("file_path"))
        return [at(base, "edited", path=path, change=change_of(tool_input))]
    if hook == "AfterTool" and isinstance(tool, str):  # a web tool, another server's
        context = payload.get("mcp_context")
        server = context.get("server_name") if isinstance(context, dict) else None
        return tool_call(base, tool, tool_input, text_of(server))
    if hook == "AfterAgent":
        said = text_of(payload.get("prompt_response"))
        continuing = bool(payload.get("stop_hook_active"))
        return [at(base, "stop", text=said, continuing=continuing, did_something=True)]
    if hook == "SessionEnd":
        return [at(base, "end", reason=text_of(payload.get("reason")))]
    return []


def render(hook: str, answer: Answer) -> dict[str, Any] | None:
    return claude_shaped(hook, answer, decision="deny")


def home() -> Path:
    """~/.gemini: its settings, its sessions (tmp/) and the person's GEMINI.md."""
    from pathlib import Path

    return Path.home() / ".gemini"


def hook_settings(program: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Our hooks as settings.json and the extension's hooks/hooks.json declare them (a
    test holds integrations/gemini to this), its timeouts in milliseconds; `program`:
    how a hook runs this client half (default: found from here)."""
    from agent_memory_client.install.entries import matcher_groups
    from agent_memory_client.ours import SERVER_NAME

    def handler(command: str) -> dict[str, Any]:
        return {"name": SERVER_NAME, "type": "command", "command": command, "timeout": 5000}

    return matcher_groups(ADAPTER, handler, program)


def config_files(project: Path | None) -> list[ConfigFile]:
    """settings.json in ~/.gemini or the project's .gemini: the hooks and the server, which
    is handed the bridge's variables by name (`${NAME}`: Gemini CLI redacts a key)."""
    from agent_memory_client.install.entries import mcp_server
    from agent_memory_client.install.files import JsonFile, McpEntry
    from agent_memory_client.ours import SERVER_NAME

    settings = (project / ".gemini" if project else home()) / "settings.json"
    return [JsonFile(settings, hook_settings(), McpEntry(SERVER_NAME, mcp_server(env="${name}")))]


def headless(binary: str, work: Path, scratch: Path, env: Mapping[str, str]) -> Headless:
    from agent_memory_client.history.distill import gemini_cli

    return gemini_cli(binary, work, scratch, env)


ADAPTER = Adapter(
    name=NAME,
    alias="gemini",
    label="Gemini CLI",
    reader="agent_memory_client.history.gemini",
    install=config_files,
    home=Home(home, rules=(RuleFiles("GEMINI.md", ("GEMINI.md",)),)),
    distiller=Distiller("gemini", "AGENT_MEMORY_GEMINI", headless),
    repository_rules=(RuleFiles("GEMINI.md", ("GEMINI.md",)),),
    hooks=(
        HookSpec("SessionStart"),  # a lifecycle matcher is an exact string: every source
        HookSpec("BeforeAgent"),
        HookSpec(
            "AfterTool",
            "run_shell_command|replace|write_file|edit|read_file|grep_search|search_file_content"
            "|web_fetch|google_web_search|mcp_.*",
        ),
        HookSpec("AfterAgent"),
        HookSpec("SessionEnd"),
    ),
    events=events,
    render=render,
    context_hooks=frozenset({"SessionStart", "BeforeAgent", "AfterTool"}),
)
