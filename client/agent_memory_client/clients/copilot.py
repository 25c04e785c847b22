"""GitHub Copilot CLI (1.0.102): hooks in `.github/hooks/*.json` of a trusted repository or
`~/.copilot/hooks/*.json` (version 1), in its own camelCase events and fields, as seen
through the real CLI (tests/cli/test_agent_clients.py). Its VS Code-compatible PascalCase
form (`SessionStart`, snake_case fields) is left alone: 1.0.102 ignores what those hooks print.

- sessionStart, userPromptSubmitted and postToolUse hand `additionalContext` to the model
  (the start's as a message of its own, the prompt's inside the user's message, a tool's
  after its result), although Copilot's reference says a prompt hook's output is dropped.
- A shell command's end is postToolUse for `bash` (`powershell` on Windows) whatever its
  status, which is in the text (`<shellId: N completed with exit code C>`); a command left
  running in the background has no outcome yet. postToolUseFailure is a tool that could not
  run at all (an edit whose text is not there), nothing of the shell's.
- Edits are `edit` and `create` (`path`, `old_str`, `new_str`), or, for the GPT-5 models,
  `apply_patch`, whose arguments are the patch itself; a read is `view`; a search that
  prints what files say is `grep` (`rg` for GPT-5) in its `content` mode, over `paths`.
- No hook can read the agent's words: agentStop names the transcript (`events.jsonl`), but
  the CLI writes it behind (with `-p`, only once the session is over), and no hook carries
  them. A session is recorded completed, without a summary, once a turn ended (loop/).
  `decision: block` with a reason sends the reminder as the next prompt, which comes back
  through userPromptSubmitted: not the user's, so no recall on it.
- An MCP tool is `<server>-<tool>` (the CLI's own tools have no `-`).
"""

from __future__ import annotations

import json

from agent_memory_client.clients.base import (
    Adapter,
    Home,
    HookSpec,
    RuleFiles,
    at,
    replaced,
    shell_call,
    text_of,
    tool_call,
)
from agent_memory_client.clients.codex import patch_change, patched_files
from agent_memory_client.loop import CAPTURE_REMINDER, Answer, Event
from agent_memory_client.shell import exit_code_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from agent_memory_client.install.files import ConfigFile

NAME = "copilot-cli"

SHELL_TOOLS = frozenset({"bash", "powershell"})
EDITING_TOOLS = frozenset({"edit", "create"})
READING_TOOLS = frozenset({"view"})
SEARCH_TOOLS = frozenset({"grep", "rg"})
WEB_TOOLS = frozenset({"web_fetch", "web_search"})
# The hooks whose `additionalContext` reaches the model (1.0.102).
CONTEXT_HOOKS = frozenset({"sessionStart", "userPromptSubmitted", "postToolUse"})


def mcp_tool(name: str) -> tuple[str, str] | None:
    """(server, tool) of an MCP tool's name, `<server>-<tool>`; None for the CLI's own. A
    server's name may hold `-` (`github-mcp-server`), a tool's seldom does: split at the last."""
    server, dash, tool = name.rpartition("-")
    return (server, tool) if dash and server and tool else None


def is_reminder(prompt: str) -> bool:
    """The capture reminder an agentStop sent, come back as the next prompt."""
    return prompt.startswith(tuple(CAPTURE_REMINDER.values()))


def searched(base: Event, args: dict[str, Any]) -> list[Event]:
    """A search that printed what the files say (`output_mode: content`; by default it
    prints names): each folder it searched (`paths`, one or a list, or `path` as other
    clients' searches name it; the working folder by default)."""
    if args.get("output_mode") != "content":
        return []
    paths = args.get("paths", args.get("path"))
    paths = [paths] if isinstance(paths, str) else paths if isinstance(paths, list) else []
    return [at(base, "searched", path=text_of(path)) for path in paths or [""]]


def arguments_of(value: Any) -> Any:
    """A tool's arguments: an object, or, as Copilot's hooks reference gives `toolArgs`,
    that object written as a JSON string; any other text as it is (apply_patch's patch)."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        return decoded if isinstance(decoded, dict) else value
    return value


def tool_used(base: Event, tool: str, arguments: Any, output: str) -> list[Event]:
    """A tool that ran (postToolUse), as the loop reads it."""
    arguments = arguments_of(arguments)
    args = arguments if isinstance(arguments, dict) else {}
    if tool in SHELL_TOOLS:
        command = text_of(args.get("command"))
        return shell_call(base, command, output, exit_code_in(output))
    if tool == "apply_patch":  # a freeform tool: its arguments are the patch
        patch = text_of(arguments)
        change = patch_change(patch)
        return [at(base, "edited", path=path, change=change) for path in patched_files(patch)]
    if tool in EDITING_TOOLS:
        change = replaced(args.get("old_str"), args.get("new_str"))
        return [at(base, "edited", path=text_of(args.get("path")), change=change)]
    if tool in READING_TOOLS:
        return [at(base, "read", path=text_of(args.get("path")))]
    if tool in SEARCH_TOOLS:
        return searched(base, args)
    if tool in WEB_TOOLS:
        return tool_call(base, tool, args)
    found = mcp_tool(tool)
    if found is None:
        return []
    server, name = found
    return tool_call(base, name, args, server)


def events(hook: str, payload: dict[str, Any]) -> list[Event]:
    base = Event(
        "start",
        session=str(payload.get("sessionId") or ""),
        agent=NAME,
        cwd=text_of(payload.get("cwd")),
    )
    tool = text_of(payload.get("toolName"))
    if hook == "sessionStart":
        return [at(base, "start")]
    if hook == "userPromptSubmitted":
        prompt = text_of(payload.get("prompt"))
        return [] if is_reminder(prompt) else [at(base, "prompt", text=prompt)]
    if hook == "postToolUse":
        result = payload.get("toolResult")
        output = text_of(result.get("textResultForLlm")) if isinstance(result, dict) else ""
        return tool_used(base, tool, payload.get("toolArgs"), output)
    if hook == "agentStop":  # a turn ended: the agent answered (in words no hook sees)
        continuing = bool(payload.get("stop_hook_active"))
        return [at(base, "stop", continuing=continuing, did_something=True)]
    if hook == "sessionEnd":
        return [at(base, "end", reason=text_of(payload.get("reason")))]
    return []


def render(hook: str, answer: Answer) -> dict[str, Any] | None:
    if answer.reminder and hook == "agentStop":
        return {"decision": "block", "reason": answer.reminder}
    if answer.context and hook in CONTEXT_HOOKS:
        return {"additionalContext": answer.context}
    return None


def home() -> Path:
    """~/.copilot, or COPILOT_HOME: its configuration and its sessions (session-state/)."""
    import os
    from pathlib import Path

    return Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot")


def config_files(project: Path | None) -> list[ConfigFile]:
    """Our hooks in a file of their own (hooks/agent-memory.json, version 1: a `bash`
    command line, its timeout in seconds) under ~/.copilot or the project's .github; the
    server in ~/.copilot/mcp-config.json or the project's .github/mcp.json."""
    from agent_memory_client.install.entries import hook_entries, mcp_server
    from agent_memory_client.install.files import JsonFile, McpEntry
    from agent_memory_client.ours import SERVER_NAME

    # The environment reaches its MCP servers whole (an unset `${NAME}` would stay
    # literal): no `env`. `type` and `tools` as `copilot mcp add` writes them.
    server = McpEntry(SERVER_NAME, {"type": "local", **mcp_server(), "tools": ["*"]})
    entries = hook_entries(
        ADAPTER, lambda command: {"type": "command", "bash": command, "timeoutSec": 5}
    )
    hooks = JsonFile(
        (project / ".github" if project else home()) / "hooks" / "agent-memory.json",
        hooks=entries, empty=(("version", 1),),
    )  # fmt: skip
    if project is None:
        return [hooks, JsonFile(home() / "mcp-config.json", server=server)]
    # A repository's .mcp.json, which Claude Code reads too, is read first and alone.
    return [hooks, JsonFile(project / ".github" / "mcp.json", server=server,
                            read_first=project / ".mcp.json")]  # fmt: skip


ADAPTER = Adapter(
    name=NAME,
    alias="copilot",
    label="GitHub Copilot CLI",
    reader="agent_memory_client.history.copilot",
    install=config_files,
    home=Home(home),
    distiller=None,
    repository_rules=(
        RuleFiles(
            "Copilot instructions",
            (".github/copilot-instructions.md", ".github/instructions/**/*.instructions.md"),
        ),
    ),
    hooks=(
        HookSpec("sessionStart"),
        HookSpec("userPromptSubmitted"),
        # The shell, edits, reads, searches, web tools, and MCP tools (`<server>-<tool>`).
        HookSpec(
            "postToolUse",
            "bash|powershell|edit|create|apply_patch|view|grep|rg|web_fetch|web_search|.+-.+",
        ),
        HookSpec("agentStop"),
        HookSpec("sessionEnd"),
    ),
    events=events,
    render=render,
    context_hooks=CONTEXT_HOOKS,
)
