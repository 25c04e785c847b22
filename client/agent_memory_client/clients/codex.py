"""Codex CLI (0.171): hooks.json in ~/.codex or <repo>/.codex, Claude Code's wire format.

What differs, read in Codex's hook schemas and seen through the real CLI:
- no SessionEnd: a turn's Stop that does not continue ends the memory session, and the
  next prompt of the same Codex session opens another (loop/ reopening);
- PostToolUse fires for a shell command whatever its exit status, with the output alone
  (`tool_response`, no status): a failure is read from the output's last lines;
- edits are `apply_patch` calls, or shell commands that run `apply_patch` (a model not
  offered the tool sends its patch so): the files are read from the patch's headers;
- hooks run only once trusted (`[hooks.state."KEY"] trusted_hash`), which the installer
  records for its own hooks.
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
    claude_shaped,
    session_of,
    shell_call,
    text_of,
    tool_call,
    tool_input_of,
)
from agent_memory_client.drafting import CHANGE_CHARS
from agent_memory_client.loop import Answer, Event
from agent_memory_client.shell import exit_code_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from agent_memory_client.history.distill import Headless
    from agent_memory_client.install.files import ConfigFile

NAME = "codex"

# *** Update File: path, *** Add File: path, *** Delete File: path, *** Move to: path
_PATCHED = re.compile(r"^\*\*\* (?:Update|Add|Move to|Delete)(?: File)?: (.+)$", re.MULTILINE)
# The shell, by each Codex's name for it (the CLI's, Codex Desktop's `shell_command`).
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "shell_command", "local_shell"})


def patched_files(patch: str) -> list[str]:
    return list(dict.fromkeys(path.strip() for path in _PATCHED.findall(patch)))


def patch_change(patch: str) -> str:
    """A patch's changed lines, as a short diff reads."""
    lines = [
        line
        for line in patch.splitlines()
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]
    return "\n".join(lines)[:CHANGE_CHARS]


def is_patch(command: str) -> bool:
    """A shell command that is a patch (`apply_patch <<'EOF' ... EOF`): how Codex applies
    one when the model is not offered the apply_patch tool (seen in 0.171)."""
    return command.lstrip().startswith("apply_patch")


def events(hook: str, payload: dict[str, Any]) -> list[Event]:
    base = session_of(payload, NAME)
    tool = payload.get("tool_name")
    tool_input = tool_input_of(payload)
    if hook == "SessionStart":
        return [at(base, "start")]
    if hook == "UserPromptSubmit":
        return [at(base, "prompt", text=text_of(payload.get("prompt")))]
    if hook == "PostToolUse" and tool in SHELL_TOOLS:
        command = text_of(tool_input.get("command") or tool_input.get("cmd"))
        output = payload.get("tool_response")
        output = output if isinstance(output, str) else str(output or "")
        if is_patch(command):
            change = patch_change(command)
            return [at(base, "edited", path=path, change=change) for path in patched_files(command)]
        here = base.at(base.kind, cwd=text_of(tool_input.get("workdir")) or base.cwd)
        return shell_call(here, command, output, exit_code_in(output))
    if hook == "PostToolUse" and tool == "apply_patch":
        patch = text_of(tool_input.get("command") or tool_input.get("input"))
        change = patch_change(patch)
        return [at(base, "edited", path=path, change=change) for path in patched_files(patch)]
    if hook == "PostToolUse" and isinstance(tool, str):  # a web tool, another server's
        return tool_call(base, tool, tool_input)
    if hook == "Stop":
        said = text_of(payload.get("last_assistant_message"))
        continuing = bool(payload.get("stop_hook_active"))
        stopping = at(base, "stop", text=said, continuing=continuing)
        # No SessionEnd: a stop that is not held ends the memory session (see above).
        return [stopping, at(base, "end", text=said, reason="turn")]
    return []


def render(hook: str, answer: Answer) -> dict[str, Any] | None:
    return claude_shaped(hook, answer, decision="block")


def home() -> Path:
    """~/.codex, or CODEX_HOME: its configuration, its sessions and the person's AGENTS.md."""
    import os
    from pathlib import Path

    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def config_files(project: Path | None) -> list[ConfigFile]:
    """hooks.json and config.toml in ~/.codex or the project's .codex, and the trust of our
    hooks in the user's config.toml (install/codex.py)."""
    from pathlib import Path

    from agent_memory_client.install import codex as tables
    from agent_memory_client.install.entries import command_handler, matcher_groups
    from agent_memory_client.install.files import JsonFile
    from agent_memory_client.install.toml_block import TomlBlock

    user_home = home()
    codex_home = project / ".codex" if project else user_home
    hooks_file, config = codex_home / "hooks.json", codex_home / "config.toml"
    trust = tables.codex_trusted(
        hooks_file, tables.codex_trust(user_home, project or Path.home()), project
    )
    return [
        JsonFile(hooks_file, hooks=matcher_groups(ADAPTER, command_handler)),
        TomlBlock(config, "mcp server", tables.codex_server(config), tables.our_codex_server),
        TomlBlock(user_home / "config.toml", f"trust {hooks_file}", trust,
                  tables.our_codex_trust(hooks_file)),
    ]  # fmt: skip


def headless(binary: str, work: Path, scratch: Path, env: Mapping[str, str]) -> Headless:
    from agent_memory_client.history.distill import codex

    return codex(binary, work, scratch, env)


ADAPTER = Adapter(
    name=NAME,
    alias="codex",
    label="Codex",
    reader="agent_memory_client.history.codex",
    install=config_files,
    home=Home(
        home,
        rules=(
            RuleFiles("AGENTS.md", ("AGENTS.md", "AGENTS.override.md")),
            # Its own working files there: the raw notes its MEMORY.md is consolidated from.
            RuleFiles(
                "Codex memories", ("*.md",), under="memories", skip=frozenset({"raw_memories.md"})
            ),
        ),
    ),
    distiller=Distiller("codex", "AGENT_MEMORY_CODEX", headless),
    # Read by Cursor, Copilot CLI and OpenCode too: declared once, here.
    repository_rules=(RuleFiles("AGENTS.md", ("AGENTS.md", "AGENTS.override.md")),),
    hooks=(
        HookSpec("SessionStart", "startup|resume|clear"),
        HookSpec("UserPromptSubmit"),
        HookSpec("PostToolUse", "Bash|apply_patch|web_search|mcp__.*"),
        HookSpec("Stop"),
    ),
    events=events,
    render=render,
    context_hooks=frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse"}),
)
