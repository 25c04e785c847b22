"""`agent-memory-client install|uninstall CLIENT [--project DIR]`: the client's own
configuration files, with our hooks (the adapter's HookSpecs) and the MCP bridge merged in.
Which files, and what goes in each, is the client's adapter's (its `install`, in
clients/<client>.py); they are made of this package's parts: entries.py (the commands,
the MCP server entry, the two shapes of hooks), files.py (a JSON file), toml_block.py (a
marked block of a TOML file) and codex.py (Codex's server table and hook trust).

- Ours is what runs this client half: a hook whose command runs its `hook`, an MCP server
  whose command runs its `mcp` (runs_our_bridge), whatever its name. A user's own server
  under the name we would take (`memory`, the official MCP memory server's usual name) is
  theirs: ours goes in under another (`agent-memory`, `agent-memory-2`, ...), and install
  says so. The name written is recorded (ours.record_server) for provenance.
- Every other byte is kept: a JSON file (with `//` and `/* */` comments, which Gemini CLI
  reads) is edited in place (jsonc.edited), its comments and layout left as they were;
  Codex's config.toml gets our tables in one marked block.
- Idempotent: a file that would not change is not written.
- Uninstall removes exactly what install added: a file nobody but install changed since
  the first install is put back byte for byte as it was before (or removed, when install
  created it); one changed since (Claude Code rewrites ~/.claude.json), even if install
  ran again after, loses only our entries. What install wrote is recorded under
  $XDG_STATE_HOME/agent-memory/installed/.
- Codex runs a hook only once trusted: install asks Codex (`codex app-server`, its
  `hooks/list`) for the hash of each of our hooks and records it as trusted, since the
  user who runs install asked for them; without Codex it says how to trust them. A
  project's `.codex/` is read only once the user trusts the project: install says so, and
  how, rather than trust a project for them.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from agent_memory_client.clients import Adapter, named
from agent_memory_client.install.entries import InstallError, read_text
from agent_memory_client.install.files import ConfigFile, JsonFile
from agent_memory_client.ours import forget_server, record_server


def config_files(client: str, project: str | None) -> tuple[Adapter, list[ConfigFile]]:
    """The client (by its name or alias) and the files install writes for it, as its
    adapter says."""
    try:
        adapter = named(client)
    except KeyError:
        raise InstallError(f"no such client: {client}") from None
    if adapter.install is None:
        raise InstallError(f"{adapter.label} has nothing to install: its sessions are read")
    return adapter, adapter.install(Path(project).resolve() if project else None)


def record_path(path: Path) -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    return Path(state) / "agent-memory" / "installed" / f"{digest}.json"


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.agent-memory")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)  # never half a file


def install(client: str, project: str | None = None) -> list[str]:
    done = []
    adapter, files = config_files(client, project)
    for config in files:  # every file read before any is written: none half-installed
        config.check(read_text(config.path))
    for config in files:  # in order: Codex's trust is asked once its hooks.json is written
        before = read_text(config.path)
        change = config.installed(before)
        after = change.text
        if after == before or (before is None and not after):
            done.append(f"unchanged: {config.path}")
        else:
            record = record_path(config.path)
            known = json.loads(read_text(record) or "null")
            entry: dict[str, Any] = {"path": str(config.path), "written": after}
            if before is None or not known:  # created, or as it was before any install
                entry["original"] = before
            elif known.get("written") == before and "original" in known:
                entry["original"] = known["original"]  # nobody changed it since ours
            # else changed since we wrote it (Claude Code rewrote it, the user added a
            # server): the first original would undo that, and `before` holds our old
            # entries: no original, and uninstall takes out ours alone.
            write_text(config.path, after)
            write_text(record, json.dumps(entry))
            done.append(f"{'created' if before is None else 'updated'}: {config.path}")
        if change.server:
            record_server(adapter.name, change.server)
        done += change.notes
    return done


def uninstall(client: str, project: str | None = None) -> list[str]:
    done = []
    adapter, files = config_files(client, project)
    for config in files:
        current = read_text(config.path)
        record = record_path(config.path)
        known = json.loads(read_text(record) or "null")
        if current is None:
            record.unlink(missing_ok=True)
            continue
        ours_before = config.our_servers(current)
        if known and "original" in known and known.get("written") == current:  # as it was
            after = known["original"]
            if after is None:
                config.path.unlink()
                done.append(f"removed: {config.path}")
            else:
                write_text(config.path, after)
                done.append(f"restored: {config.path}")
        else:
            after = config.uninstalled(current).text
            if after == current or (
                isinstance(config, JsonFile) and config.read(current) == config.read(after)
            ):
                done.append(f"unchanged: {config.path}")
            else:
                write_text(config.path, after)
                done.append(f"updated: {config.path}")
        record.unlink(missing_ok=True)
        for name in ours_before - config.our_servers(after):
            for recorded_as in adapter.names:  # an earlier install recorded the alias
                forget_server(recorded_as, name)
    return done


__all__ = ["InstallError", "config_files", "install", "uninstall"]
