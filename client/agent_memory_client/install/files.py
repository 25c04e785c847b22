"""A JSON configuration file (comments allowed: Gemini CLI reads them) and what install
merges into it: our hooks and our MCP server, every other byte kept (jsonc.edited)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory_client import jsonc
from agent_memory_client.install.entries import (
    Change,
    InstallError,
    clash_note,
    free_name,
    is_ours,
    read_text,
    runs_our_bridge,
)
from agent_memory_client.install.toml_block import TomlBlock


def projects_servers(config: dict[str, Any]) -> dict[str, Any]:
    """The servers of each project in ~/.claude.json (Claude Code's local scope), which
    would hide a user-scope server of the same name there: not ours unless they run it."""
    projects = config.get("projects")
    found: dict[str, Any] = {}
    for project in projects.values() if isinstance(projects, dict) else ():
        servers = project.get("mcpServers") if isinstance(project, dict) else None
        if isinstance(servers, dict):
            found.update({n: s for n, s in servers.items() if not runs_our_bridge(s)})
    return found


def hooks_without_ours(
    hooks: dict[str, Any], keep: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """`hooks` without ours (a group left empty goes too, and an event left with no group),
    except those exactly as install writes them (`keep`), left where they are."""
    result: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            result[event] = groups
            continue
        wanted = list(keep.get(event, []))
        kept = []
        for group in groups:
            if group in wanted:
                wanted.remove(group)
                kept.append(group)
            elif isinstance(group, dict) and isinstance(group.get("hooks"), list):
                inner = [h for h in group["hooks"] if not is_ours(_command(h))]
                if len(inner) == len(group["hooks"]):
                    kept.append(group)
                elif inner:
                    kept.append({**group, "hooks": inner})
            elif not is_ours(_command(group)):
                kept.append(group)
        if kept:
            result[event] = kept
    return result


def _command(handler: object) -> object:
    """A hook entry's command line: `command`, or Copilot CLI's `bash` or `powershell`."""
    if not isinstance(handler, dict):
        return None
    return next((handler[k] for k in ("command", "bash", "powershell") if k in handler), None)


@dataclass(frozen=True, slots=True)
class McpEntry:
    wanted: str  # its name, unless another server has that name
    server: dict[str, Any]


@dataclass(frozen=True, slots=True)
class JsonFile:
    """One JSON configuration file (comments allowed) and what install merges into it:
    hooks (event -> groups or entries) and the MCP server, under `mcpServers`."""

    path: Path
    hooks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    server: McpEntry | None = None
    # A file install creates starts from this (Cursor's hooks.json declares its version).
    empty: tuple[tuple[str, Any], ...] = ()
    # A file the client reads instead of this one where it exists (Copilot CLI: a
    # repository's .mcp.json, then only its .github/mcp.json): install says what it means.
    read_first: Path | None = None

    def check(self, text: str | None) -> None:
        self.read(text)

    def passed_over(self, name: str) -> tuple[str, ...]:
        """What install says when the client reads `read_first` instead of this file."""
        first = self.read_first
        if first is None or not first.exists():
            return ()
        try:
            running = JsonFile(first).our_servers(read_text(first))
        except InstallError:
            running = set()
        if running:
            return (f"kept: {first} is read instead of {self.path}, and its server"
                    f" {sorted(running)[0]} runs this bridge already",)  # fmt: skip
        return (f"not read while {first} exists: the client reads it instead of {self.path};"
                f" put the {name} server in it as well, or install without --project",)  # fmt: skip

    def installed(self, text: str | None) -> Change:
        config = self.read(text)
        name: str | None = None
        notes: tuple[str, ...] = ()
        if self.hooks:
            hooks = hooks_without_ours(self.section(config, "hooks"), keep=self.hooks)
            for event, groups in self.hooks.items():
                present = hooks.get(event, [])
                if not isinstance(present, list):
                    raise InstallError(f"{self.path}: hooks.{event} is not a list")
                hooks[event] = [*present, *(g for g in groups if g not in present)]
            config["hooks"] = hooks
        if self.server:
            servers = self.section(config, "mcpServers")
            ours = [n for n, s in servers.items() if runs_our_bridge(s)]
            wanted = self.server.wanted
            taken = {**servers, **projects_servers(config)}
            name = wanted if wanted in ours else ours[0] if ours else free_name(wanted, taken)
            if name != wanted and wanted in taken and wanted not in ours:
                notes = (clash_note(self.path, wanted, name),)
            config["mcpServers"] = {
                **{n: s for n, s in servers.items() if n == name or n not in ours},
                name: self.server.server,
            }
            notes += self.passed_over(name)
        return Change(self.edited(text, config), name, notes)

    def uninstalled(self, text: str) -> Change:
        config = self.read(text)
        if isinstance(config.get("hooks"), dict):
            config["hooks"] = hooks_without_ours(config["hooks"], keep={})
            if not config["hooks"]:
                del config["hooks"]
        if isinstance(config.get("mcpServers"), dict):
            kept = {n: s for n, s in config["mcpServers"].items() if not runs_our_bridge(s)}
            config["mcpServers"] = kept
            if not kept:
                del config["mcpServers"]
        if config == dict(self.empty):
            config = {}
        return Change(self.edited(text, config))

    def our_servers(self, text: str | None) -> set[str]:
        servers = self.read(text).get("mcpServers")
        if not isinstance(servers, dict):
            return set()
        return {name for name, server in servers.items() if runs_our_bridge(server)}

    def read(self, text: str | None) -> dict[str, Any]:
        if text is None or not text.strip():
            return dict(self.empty)
        try:
            config = jsonc.loads(text)
        except jsonc.JsoncError as exc:
            raise InstallError(f"{self.path} is not JSON ({exc}): fix it, then again") from exc
        if not isinstance(config, dict):
            raise InstallError(f"{self.path} does not hold a JSON object")
        return config

    def section(self, config: dict[str, Any], key: str) -> dict[str, Any]:
        found = config.get(key, {})
        if not isinstance(found, dict):
            raise InstallError(f"{self.path}: {key} is not an object")
        return dict(found)

    def edited(self, text: str | None, config: dict[str, Any]) -> str:
        return jsonc.edited(text if text and text.strip() else None, config)


ConfigFile = JsonFile | TomlBlock
