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

# The name the installers give the server (unless another server has it), and the Claude
# Code plugin's server as its tools are named (`mcp__plugin_<plugin>_<server>__<tool>`, the
# plugin's own .mcp.json naming it `memory`): ours by construction, whatever is recorded.
SERVER_NAME = "agent-memory"
PLUGIN_SERVER = "plugin_agent-memory_memory"


def servers_file() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "agent-memory" / "servers.json"


def _recorded() -> dict[str, list[str]] | None:
    """The names recorded for each client; None when nothing ever was (no file)."""
    try:
        found = json.loads(servers_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
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
    """The MCP server names that are this server: for `client`, or for any client. Only
    the names an install wrote: a user's own server called `agent-memory`, beside which
    ours went in as `agent-memory-2`, is theirs."""
    recorded = _recorded()
    if recorded is None:
        # No install has recorded anything: one from before the recording (which wrote
        # `agent-memory` for Codex, Gemini CLI and Cursor, over whatever had the name), or
        # none (the plugin alone). `agent-memory` is then taken as ours, as it was before:
        # not to would make every session that calls our tools read as having read an
        # outsider (its memories all waiting for a person), where taking it misreads only
        # a user's own server so named that no install has ever stood beside. The first
        # install that records (any client; `install CLIENT` again records that client's)
        # ends this: from then on the file says, even once uninstall has emptied it.
        return frozenset({SERVER_NAME, PLUGIN_SERVER})
    chosen = [recorded.get(client, [])] if client else list(recorded.values())
    return frozenset({PLUGIN_SERVER, *(name for names in chosen for name in names)})


def _write(names: dict[str, list[str]]) -> None:
    path = servers_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps({"names": names}, indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)  # never half a file: a hook may read it meanwhile


def record_server(client: str, name: str) -> None:
    """The installer wrote our server under `name` in `client`'s configuration."""
    names = _recorded() or {}
    if name not in names.get(client, []):
        names[client] = [*names.get(client, []), name]
        _write(names)


def forget_server(client: str, name: str) -> None:
    """The uninstaller removed our server `name` from `client`'s configuration."""
    names = _recorded() or {}
    if name in names.get(client, []):
        names[client] = [n for n in names[client] if n != name]
        _write({c: n for c, n in names.items() if n})
