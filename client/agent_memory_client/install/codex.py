"""Codex's own part of install: our MCP server as a `[mcp_servers.NAME]` table of its
config.toml, and the trust Codex needs before it runs a hook (asked of `codex
app-server`), which only the user's config.toml holds, for a trusted project alone."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_memory_client.clients.codex import home as codex_user_home
from agent_memory_client.install.entries import (
    BRIDGE_ENV,
    Change,
    clash_note,
    free_name,
    is_ours,
    mcp_server,
    runs_our_bridge,
)
from agent_memory_client.install.toml_block import toml_string
from agent_memory_client.ours import SERVER_NAME

NOT_FOUND = (
    "not yet trusted: Codex was not found here; in Codex, open /hooks and trust"
    " agent-memory's hooks (or run this again with codex on PATH)"
)


def written_by_install(server: object) -> bool:
    """A Codex MCP server table as codex_server writes it, whichever the client half's
    path: ours wherever it stands."""
    return (
        isinstance(server, dict)
        and set(server) == {"command", "args", "env_vars"}
        and isinstance(server["args"], list)
        and server["args"][-3:] == ["mcp", "--tools", "agent"]
        and server["env_vars"] == list(BRIDGE_ENV)
        and runs_our_bridge(server)
    )


def our_codex_server(path: tuple[str, ...], value: Any, marked: bool) -> bool:
    """Between our markers, a server that runs the bridge; elsewhere, one as we write it."""
    if len(path) != 2 or path[0] != "mcp_servers":
        return False
    return runs_our_bridge(value) if marked else written_by_install(value)


def our_codex_trust(hooks_file: Path) -> Callable[[tuple[str, ...], Any, bool], bool]:
    """Between our markers, the trust of a hook of `hooks_file` (elsewhere, the user's)."""

    def ours(path: tuple[str, ...], value: Any, marked: bool) -> bool:
        return (
            marked
            and len(path) == 3
            and path[:2] == ("hooks", "state")
            and path[2].startswith(f"{hooks_file}:")
        )

    return ours


def codex_server(path: Path) -> Callable[[dict[str, Any]], Change]:
    """The bridge as Codex's `[mcp_servers.NAME]`, named as free_name() says; none when the
    file's own tables already run it."""

    def body(document: dict[str, Any]) -> Change:
        servers = document.get("mcp_servers")
        servers = servers if isinstance(servers, dict) else {}
        ours = [name for name, server in servers.items() if runs_our_bridge(server)]
        if ours:
            kept = f"kept: your [mcp_servers.{ours[0]}] in {path} runs this bridge already"
            return Change("", ours[0], (kept,))
        name = free_name(SERVER_NAME, servers)
        notes = (clash_note(path, SERVER_NAME, name),) if name != SERVER_NAME else ()
        server = mcp_server()
        args = ", ".join(toml_string(a) for a in server["args"])
        passed = ", ".join(toml_string(n) for n in BRIDGE_ENV)
        text = (
            f"[mcp_servers.{name}]\ncommand = {toml_string(server['command'])}\n"
            f"args = [{args}]\nenv_vars = [{passed}]\n"
        )
        return Change(text, name, notes)

    return body


def codex_trusted(
    hooks_file: Path, trust: Callable[[Path], dict[str, str] | None], project: Path | None
) -> Callable[[dict[str, Any]], Change]:
    """Our hooks' trust, which Codex reads from the user's config.toml only (a project
    cannot trust its own hooks); for a project, once the user has trusted the project."""

    def body(user_config: dict[str, Any]) -> Change:
        if project is not None and (level := project_trust(user_config, project)) != "trusted":
            return Change("", notes=(untrusted_project_note(project, hooks_file, level),))
        found = trust(hooks_file)
        if found is None:
            return Change("", notes=(NOT_FOUND,))
        hooks = user_config.get("hooks")
        state = hooks.get("state") if isinstance(hooks, dict) else None
        trusted = "trusted: the hooks above, in Codex's hook trust"
        if not found:
            listed_none = (
                f"not yet trusted: Codex lists none of {hooks_file}'s hooks; in Codex, open"
                " /hooks and trust agent-memory's"
            )
            return Change("", notes=(listed_none,))
        text = "".join(  # a hash the user's own tables record already stays theirs
            f"[hooks.state.{toml_string(key)}]\ntrusted_hash = {toml_string(digest)}\n"
            for key, digest in sorted(found.items())
            if not (isinstance(state, dict) and key in state)
        )
        return Change(text, notes=(trusted,))

    return body


def project_trust(user_config: dict[str, Any], project: Path) -> str | None:
    """The project's `trust_level` in the user's config.toml, as Codex looks it up: the
    folder's own entry, else that of the git checkout it is in (a linked worktree's: the
    main checkout's)."""
    projects = user_config.get("projects")
    if not isinstance(projects, dict):
        return None
    for folder in codex_project_keys(project):
        entry = projects.get(str(folder))
        if isinstance(entry, dict) and isinstance(entry.get("trust_level"), str):
            return str(entry["trust_level"])
    return None


def codex_project_keys(project: Path) -> list[Path]:
    keys = [project]
    checkout = next((p for p in (project, *project.parents) if (p / ".git").exists()), None)
    if checkout is None:
        return keys
    keys.append(checkout)
    git = checkout / ".git"
    if git.is_file():  # a linked worktree: `gitdir: <main>/.git/worktrees/<name>`
        pointer = git.read_text(encoding="utf-8", errors="replace").partition("gitdir:")[2]
        main, found, _ = pointer.strip().partition(f"{os.sep}.git{os.sep}worktrees{os.sep}")
        if found:
            keys.append(Path(main))
    return list(dict.fromkeys(keys))


def untrusted_project_note(project: Path, hooks_file: Path, level: str | None) -> str:
    user_config = codex_user_home() / "config.toml"
    state = "is marked untrusted" if level == "untrusted" else "is not trusted yet"
    return (
        f"not yet trusted: Codex reads {hooks_file.parent} (these hooks and the MCP server)"
        f" only in a trusted project, and {project} {state}. To trust it, put in"
        f" {user_config}:\n"
        f"    [projects.{toml_string(str(project))}]\n"
        f'    trust_level = "trusted"\n'
        f"  (or answer Yes when Codex asks whether to trust {project}), then run"
        f" `agent-memory-client install codex --project {shlex.quote(str(project))}` again"
        " to trust these hooks"
    )


def codex_trust(codex_home: Path, cwd: Path) -> Callable[[Path], dict[str, str] | None]:
    """Our hooks' keys and hashes as Codex computes them (asked of `codex app-server`),
    or None when Codex is not installed here."""

    def trust(hooks_file: Path) -> dict[str, str] | None:
        codex = os.environ.get("AGENT_MEMORY_CODEX") or shutil.which("codex")
        if not codex:
            return None
        messages: list[dict[str, Any]] = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"clientInfo": {"name": "agent-memory-client", "version": "0.1.0"}}},
            {"jsonrpc": "2.0", "method": "initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
        ]  # fmt: skip
        # A first start of Codex in a new home can answer before it has read the hooks.
        listed = _ask_codex(codex, codex_home, messages) or _ask_codex(codex, codex_home, messages)
        found = {}
        for entry in listed:
            source = Path(str(entry.get("sourcePath") or "")).resolve()
            if source == hooks_file.resolve() and is_ours(entry.get("command")):
                found[str(entry["key"])] = str(entry["currentHash"])
        return found

    return trust


def _ask_codex(
    codex: str, codex_home: Path, messages: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    env = {**os.environ, "CODEX_HOME": str(codex_home)}
    try:
        process = subprocess.Popen(
            [codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, text=True,
        )  # fmt: skip
    except OSError:
        return []
    assert process.stdin is not None and process.stdout is not None
    with process:  # its pipes closed, and it waited for, whatever happens
        try:
            for message in messages:
                process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            for line in process.stdout:
                answer = json.loads(line)
                if answer.get("id") == 2:
                    data = answer.get("result", {}).get("data") or [{}]
                    return list(data[0].get("hooks") or [])
        except (OSError, ValueError):
            return []
        finally:
            process.kill()
    return []
