"""Which MCP servers in a client's configuration are this one: the names the installer
wrote, not a word in a name. A user's own server called `memory` (the official MCP memory
server's usual name) is another server, whose text a session did not write.

`agent-memory-client install` records the name it wrote for each client here
($XDG_STATE_HOME/agent-memory/servers.json); the hooks and the history import read it when
they meet an MCP tool. The Claude Code plugin's server has a fixed name (its `.mcp.json`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# The server as the installers name it, and as the Claude Code plugin's tools are named
# (`mcp__plugin_<plugin>_<server>__<tool>`, the plugin's own .mcp.json naming it `memory`).
SERVER_NAME = "agent-memory"
PLUGIN_SERVER = "plugin_agent-memory_memory"
ALWAYS_OURS = frozenset({SERVER_NAME, PLUGIN_SERVER})


def servers_file() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "agent-memory" / "servers.json"


def _recorded() -> dict[str, list[str]]:
    try:
        found = json.loads(servers_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    names = found.get("names") if isinstance(found, dict) else None
    if not isinstance(names, dict):
        return {}
    return {
        str(client): [str(n) for n in listed if isinstance(n, str)]
        for client, listed in names.items()
        if isinstance(listed, list)
    }


def our_servers(client: str | None = None) -> frozenset[str]:
    """The MCP server names that are this server: for `client`, or for any client."""
    recorded = _recorded()
    chosen = [recorded.get(client, [])] if client else list(recorded.values())
    return ALWAYS_OURS | {name for names in chosen for name in names}


def _write(names: dict[str, list[str]]) -> None:
    path = servers_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps({"names": names}, indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)  # never half a file: a hook may read it meanwhile


def record_server(client: str, name: str) -> None:
    """The installer wrote our server under `name` in `client`'s configuration."""
    names = _recorded()
    if name not in names.get(client, []):
        names[client] = [*names.get(client, []), name]
        _write(names)


def forget_server(client: str, name: str) -> None:
    """The uninstaller removed our server `name` from `client`'s configuration."""
    names = _recorded()
    if name in names.get(client, []):
        names[client] = [n for n in names[client] if n != name]
        _write({c: n for c, n in names.items() if n})
