"""What install writes of its own, whatever the client: the command a hook or the bridge
runs, the MCP server entry, a client's hooks in one of the two shapes clients read, and
how ours is told from a user's own (whatever its name)."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory_client.clients import DEFAULT_CLIENT, Adapter, HookSpec
from agent_memory_client.ours import SERVER_NAME

# What the bridge reads of its environment, which Codex, Gemini CLI and Cursor do not all
# hand an MCP server whole (Gemini CLI redacts what looks like a key).
BRIDGE_ENV = ("AGENT_MEMORY_URL", "AGENT_MEMORY_API_KEY", "AGENT_MEMORY_REPO")


class InstallError(Exception):
    """A configuration file that cannot be read as its client writes it: nothing written."""


def client_command() -> list[str]:
    """How a hook or the bridge runs this client half: the console script beside this
    interpreter, else the interpreter with `-m` (found without PATH: clients started from
    an IDE have another)."""
    script = Path(sys.executable).parent / "agent-memory-client"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "agent_memory_client"]


def is_ours(command: object) -> bool:
    text = str(command or "")
    return ("agent-memory-client" in text or "agent_memory_client" in text) and " hook " in text


def hook_command(adapter: Adapter, spec: HookSpec, program: list[str] | None = None) -> str:
    """The hook's command line, naming the client by its alias unless it is the default
    one; `program`, how it runs this client half (default: found from here,
    client_command())."""
    words = [*(program or client_command()), "hook"]
    if adapter.name != DEFAULT_CLIENT:
        words += ["--client", adapter.alias]
    return shlex.join([*words, spec.hook])


def mcp_server(env: str | None = None) -> dict[str, Any]:
    """The bridge as an MCP server; `env`, how the client's configuration names a variable
    of its own environment (each of BRIDGE_ENV is then passed on)."""
    command, *prefix = client_command()
    server: dict[str, Any] = {"command": command, "args": [*prefix, "mcp", "--tools", "agent"]}
    if env:
        server["env"] = {name: env.format(name=name) for name in BRIDGE_ENV}
    return server


def command_handler(command: str) -> dict[str, Any]:
    """A hook's handler as Claude Code and Codex read it: a command, 5 s to run."""
    return {"type": "command", "timeout": 5, "command": command}


def runs_our_bridge(server: object) -> bool:
    """An MCP server entry that runs this client half's `mcp` command, as mcp_server()
    writes it (`agent-memory-client mcp`, `python -m agent_memory_client mcp`), the plugin
    does, or a person wrote it (through `uvx`, say): ours, whatever its name."""
    if not isinstance(server, dict) or not isinstance(server.get("command"), str):
        return False
    args = server.get("args")
    if isinstance(args, list):
        words = [server["command"], *(str(a) for a in args)]
    else:  # a whole command line in `command`
        try:
            words = shlex.split(server["command"])
        except ValueError:
            return False
    for at, word in enumerate(words):
        program = Path(word).name.removesuffix(".exe")
        if program == "agent-memory-client" or words[at : at + 2] == ["-m", "agent_memory_client"]:
            return "mcp" in words[at + 1 :]
    return False


def free_name(wanted: str, servers: dict[str, Any]) -> str:
    """`wanted`, unless another server has it: then `agent-memory`, `agent-memory-2`..."""
    candidates = [wanted, SERVER_NAME, *(f"{SERVER_NAME}-{n}" for n in range(2, len(servers) + 3))]
    return next(name for name in candidates if name not in servers)


def clash_note(path: Path, wanted: str, name: str) -> str:
    return (
        f"named {name}: {path} already has an MCP server named {wanted} that is not this"
        " one (left as it is)"
    )


def matcher_groups(
    adapter: Adapter, handler: Callable[[str], dict[str, Any]], program: list[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Claude Code's shape, which Codex and Gemini CLI share: event -> matcher groups."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for spec in adapter.hooks:
        group: dict[str, Any] = {"hooks": [handler(hook_command(adapter, spec, program))]}
        if spec.matcher:
            group = {"matcher": spec.matcher, **group}
        groups.setdefault(spec.event, []).append(group)
    return groups


def hook_entries(
    adapter: Adapter, handler: Callable[[str], dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Cursor's and Copilot CLI's shape: event -> entries, each a command of its own, its
    matcher beside it."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for spec in adapter.hooks:
        entry = handler(hook_command(adapter, spec))
        if spec.matcher:
            entry["matcher"] = spec.matcher
        hooks.setdefault(spec.event, []).append(entry)
    return hooks


@dataclass(frozen=True, slots=True)
class Change:
    """A configuration file's text after install or uninstall, and what to say of it."""

    text: str
    server: str | None = None  # the name our MCP server has in it
    notes: tuple[str, ...] = ()


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path} ({exc})") from exc
