"""Claude Code: its hooks (the plugin's hooks/hooks.json) call `hook EVENT` with the
kebab-case names below; input and output as Claude Code's hooks reference gives them
(2.1: PostToolUseFailure carries a failed Bash command's `error`; Stop carries
`last_assistant_message`)."""

from __future__ import annotations

from agent_memory_client.clients.base import (
    Adapter,
    CheckoutRules,
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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from agent_memory_client.history.distill import Headless
    from agent_memory_client.install.files import ConfigFile

NAME = "claude-code"
SERVER_NAME = "memory"  # as the plugin names it: its tools keep their names
AUTO_MEMORY = "Claude Code auto memory"  # ~/.claude/projects/<its folder>/memory/*.md

EDITING_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})  # PowerShell: Claude Code on Windows
SEARCH_TOOL = "Grep"
# Claude Code's event for each of our hook names.
EVENT_NAMES = {
    "session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit",
    "post-tool-use-failure": "PostToolUseFailure", "post-tool-use": "PostToolUse",
    "stop": "Stop", "session-end": "SessionEnd",
}  # fmt: skip


def shell_output(response: Any) -> str:
    """What a shell command printed, as PostToolUse's `tool_response` gives it."""
    if isinstance(response, dict):
        return "\n".join(text_of(response.get(k)) for k in ("stdout", "stderr") if response.get(k))
    return text_of(response)


def searched(base: Event, tool_input: dict[str, Any]) -> list[Event]:
    """A Grep that printed what the files say (its `content` mode; by default it prints
    names): the file or folder it searched, the working folder by default."""
    if tool_input.get("output_mode") != "content":
        return []
    return [
        at(base, "searched", path=text_of(tool_input.get("path") or tool_input.get("file_path")))
    ]


def events(hook: str, payload: dict[str, Any]) -> list[Event]:
    base = session_of(payload, NAME)
    tool = payload.get("tool_name")
    tool_input = tool_input_of(payload)
    command = text_of(tool_input.get("command"))
    path = text_of(tool_input.get("file_path") or tool_input.get("notebook_path"))
    if hook == "session-start":
        return [at(base, "start")]
    if hook == "user-prompt-submit":
        return [at(base, "prompt", text=text_of(payload.get("prompt")))]
    if hook == "post-tool-use-failure" and tool in SHELL_TOOLS:
        return shell_call(base, command, str(payload.get("error") or ""), 1)
    if hook == "post-tool-use" and tool in SHELL_TOOLS:
        return shell_call(base, command, shell_output(payload.get("tool_response")), 0)
    if hook == "post-tool-use" and tool in EDITING_TOOLS:
        return [at(base, "edited", path=path, change=change_of(tool_input))]
    if hook == "post-tool-use" and tool == "Read":
        return [at(base, "read", path=path)]
    if hook == "post-tool-use" and tool == SEARCH_TOOL:
        return searched(base, tool_input)
    if hook == "post-tool-use" and isinstance(tool, str):  # a web tool, another server's
        return tool_call(base, tool, tool_input)
    if hook == "stop":
        said = text_of(payload.get("last_assistant_message"))
        continuing = bool(payload.get("stop_hook_active"))
        return [at(base, "stop", text=said, continuing=continuing)]
    if hook == "session-end":
        return [at(base, "end", reason=text_of(payload.get("reason")))]
    return []


def render(hook: str, answer: Answer) -> dict[str, Any] | None:
    return claude_shaped(EVENT_NAMES[hook], answer, decision="block")


def home() -> Path:
    """~/.claude: its settings, its sessions (projects/) and the person's CLAUDE.md."""
    from pathlib import Path

    return Path.home() / ".claude"


def project_folder(top: Path) -> str:
    """Its folder for a checkout under ~/.claude/projects: the path with every character
    but a letter or a digit a dash (as its 2.1 releases name it)."""
    import re

    return re.sub(r"[^A-Za-z0-9]", "-", str(top))


def auto_memory(claude_home: Path, top: Path) -> list[Path]:
    """The folders of its auto memory of a checkout: projects/<its folder>/memory. A long
    path's folder is cut at 200 characters and given a hash: any folder so cut."""
    folder = project_folder(top)
    projects = claude_home / "projects"
    if len(folder) > 200 and projects.is_dir():
        return sorted(p / "memory" for p in projects.glob(f"{folder[:200]}-*"))
    return [projects / folder / "memory"]


def config_files(project: Path | None) -> list[ConfigFile]:
    """The hooks in .claude/settings.json; the server in ~/.claude.json (the user's) or
    the project's .mcp.json. (The plugin, integrations/claude-code, declares both itself.)"""
    from pathlib import Path

    from agent_memory_client.install.entries import command_handler, matcher_groups, mcp_server
    from agent_memory_client.install.files import JsonFile, McpEntry

    settings = (project / ".claude" if project else home()) / "settings.json"
    servers = project / ".mcp.json" if project else Path.home() / ".claude.json"
    server = McpEntry(SERVER_NAME, {"type": "stdio", **mcp_server()})
    return [
        JsonFile(settings, hooks=matcher_groups(ADAPTER, command_handler)),
        JsonFile(servers, server=server),
    ]


def headless(binary: str, work: Path, scratch: Path, env: Mapping[str, str]) -> Headless:
    from agent_memory_client.history.distill import claude_code

    return claude_code(binary, work, scratch, env)


ADAPTER = Adapter(
    name=NAME,
    alias="claude",
    label="Claude Code",
    reader="agent_memory_client.history.claude_code",
    install=config_files,
    home=Home(
        home,
        rules=(RuleFiles("CLAUDE.md", ("CLAUDE.md", "rules/**/*.md")),),
        checkout_rules=(CheckoutRules(AUTO_MEMORY, auto_memory, ("*.md",)),),
    ),
    distiller=Distiller("claude", "AGENT_MEMORY_CLAUDE", headless),
    repository_rules=(
        RuleFiles(
            "CLAUDE.md",
            ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules/**/*.md"),
        ),
    ),
    hooks=(
        HookSpec("SessionStart", "startup|resume|clear|compact", "session-start"),
        HookSpec("UserPromptSubmit", None, "user-prompt-submit"),
        HookSpec("PostToolUseFailure", "Bash|PowerShell", "post-tool-use-failure"),
        HookSpec(
            "PostToolUse",
            "Bash|PowerShell|Edit|Write|MultiEdit|NotebookEdit|Read|Grep|WebFetch|WebSearch|mcp__.*",
            "post-tool-use",
        ),
        HookSpec("Stop", None, "stop"),
        HookSpec("SessionEnd", None, "session-end"),
    ),
    events=events,
    render=render,
    context_hooks=frozenset(EVENT_NAMES) - {"stop", "session-end"},
)
