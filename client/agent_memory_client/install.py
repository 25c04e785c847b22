"""`agent-memory-client install|uninstall CLIENT [--project DIR]`: the client's own
configuration files, with our hooks (the adapter's HookSpecs) and the MCP bridge merged in.

- Merging: another hook, server or setting in the file is kept as it is; ours are the hooks
  whose command runs this client half's `hook`, and the server named `agent-memory`.
- Idempotent: a file that would not change is not written.
- Uninstall removes exactly what install added: a file nobody changed since is put back
  byte for byte as it was before (or removed, when install created it); one changed since
  loses only our entries. What install wrote is recorded under
  $XDG_STATE_HOME/agent-memory/installed/.
- Codex runs a hook only once trusted: install asks Codex (`codex app-server`, its
  `hooks/list`) for the hash of each of our hooks and records it as trusted, since the
  user who runs install asked for them; without Codex it says how to trust them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory_client.clients import CLIENTS, HookSpec

SERVER_NAME = "agent-memory"
CLAUDE_SERVER_NAME = "memory"  # as the plugin names it: its tools keep their names
TOML_BEGIN = "# >>> agent-memory ({tag}): written by `agent-memory-client install codex`"
TOML_END = "# <<< agent-memory ({tag})"
CODEX_TIMEOUT_S = 20.0
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


def hook_command(client: str, spec: HookSpec, program: list[str] | None = None) -> str:
    """The hook's command line; `program`, how it runs this client half (default: found
    from here, client_command())."""
    words = [*(program or client_command()), "hook"]
    if client != "claude-code":
        words += ["--client", client]
    return shlex.join([*words, spec.hook])


def mcp_server(env: str | None = None) -> dict[str, Any]:
    """The bridge as an MCP server; `env`, how the client's configuration names a variable
    of its own environment (each of BRIDGE_ENV is then passed on)."""
    command, *prefix = client_command()
    server: dict[str, Any] = {"command": command, "args": [*prefix, "mcp", "--tools", "agent"]}
    if env:
        server["env"] = {name: env.format(name=name) for name in BRIDGE_ENV}
    return server


# ---- what each client's files hold ------------------------------------------------------


def matcher_groups(
    client: str, handler: Callable[[str], dict[str, Any]], program: list[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Claude Code's shape, which Codex and Gemini CLI share: event -> matcher groups."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for spec in CLIENTS[client].hooks:
        group: dict[str, Any] = {"hooks": [handler(hook_command(client, spec, program))]}
        if spec.matcher:
            group = {"matcher": spec.matcher, **group}
        groups.setdefault(spec.event, []).append(group)
    return groups


def add_groups(config: dict[str, Any], groups: dict[str, list[dict[str, Any]]]) -> None:
    hooks = config.setdefault("hooks", {})
    for event, added in groups.items():
        hooks.setdefault(event, [])
        hooks[event] = [*hooks[event], *added]


def remove_ours(config: dict[str, Any], server_names: tuple[str, ...]) -> dict[str, Any]:
    """`config` without our hooks (a group left empty goes too, and an event left with no
    group, and an empty `hooks`) and without our MCP server."""
    config = json.loads(json.dumps(config))
    hooks = config.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept = []
            for group in groups:
                if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                    inner = [h for h in group["hooks"] if not is_ours(_command(h))]
                    if inner:
                        kept.append({**group, "hooks": inner})
                elif not (isinstance(group, dict) and is_ours(group.get("command"))):
                    kept.append(group)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
        if not hooks:
            del config["hooks"]
    servers = config.get("mcpServers")
    if isinstance(servers, dict):
        for name in server_names:
            servers.pop(name, None)
        if not servers:
            del config["mcpServers"]
    return config


def _command(handler: object) -> object:
    return handler.get("command") if isinstance(handler, dict) else None


def with_servers(config: dict[str, Any], name: str, server: dict[str, Any]) -> None:
    config.setdefault("mcpServers", {})[name] = server


@dataclass(frozen=True, slots=True)
class JsonFile:
    """One JSON configuration file and what install merges into it."""

    path: Path
    add: Callable[[dict[str, Any]], None]
    server_names: tuple[str, ...] = (SERVER_NAME,)
    # A file install creates starts from this (Cursor's hooks.json declares its version).
    empty: tuple[tuple[str, Any], ...] = ()

    def installed(self, text: str | None) -> str:
        config = self.read(text)
        config = remove_ours(config, self.server_names)  # reinstalling replaces ours
        self.add(config)
        return json.dumps(config, indent=2, ensure_ascii=False) + "\n"

    def uninstalled(self, text: str) -> str:
        config = remove_ours(self.read(text), self.server_names)
        if config == dict(self.empty):
            config = {}
        return json.dumps(config, indent=2, ensure_ascii=False) + "\n"

    def read(self, text: str | None) -> dict[str, Any]:
        if text is None or not text.strip():
            return dict(self.empty)
        try:
            config = json.loads(text)
        except ValueError as exc:
            raise InstallError(f"{self.path} is not JSON ({exc}): fix it, then again") from exc
        if not isinstance(config, dict):
            raise InstallError(f"{self.path} does not hold a JSON object")
        return config


@dataclass(frozen=True, slots=True)
class TomlBlock:
    """Codex's config.toml: our tables in one marked block at its end (TOML tables may
    stand anywhere), removed whole by uninstall."""

    path: Path
    tag: str  # which block: the MCP server, or the trust of one hooks.json
    body: Callable[[], str]

    def installed(self, text: str | None) -> str:
        rest = self.uninstalled(text or "")
        body = self.body()
        if not body:
            return rest if text is not None else ""
        begin, end = TOML_BEGIN.format(tag=self.tag), TOML_END.format(tag=self.tag)
        return f"{rest}\n{begin}\n{body}{end}\n"

    def uninstalled(self, text: str) -> str:
        begin_line, end_line = TOML_BEGIN.format(tag=self.tag), TOML_END.format(tag=self.tag)
        begin = text.find(f"\n{begin_line}\n")
        if begin < 0:
            return text
        end = text.find(f"{end_line}\n", begin)
        end = len(text) if end < 0 else end + len(end_line) + 1
        return text[:begin] + text[end:]


ConfigFile = JsonFile | TomlBlock


def toml_string(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is written as JSON writes one


def codex_server() -> str:
    server = mcp_server()
    args = ", ".join(toml_string(a) for a in server["args"])
    passed = ", ".join(toml_string(name) for name in BRIDGE_ENV)
    return (
        f"[mcp_servers.{SERVER_NAME}]\ncommand = {toml_string(server['command'])}\n"
        f"args = [{args}]\nenv_vars = [{passed}]\n"
    )


def codex_trusted(hooks_file: Path, trust: Callable[[Path], dict[str, str]]) -> Callable[[], str]:
    """Our hooks' trust, which Codex reads from the user's config.toml only (a project
    cannot trust its own hooks)."""

    def body() -> str:
        found = sorted(trust(hooks_file).items())
        return "".join(
            f"[hooks.state.{toml_string(key)}]\ntrusted_hash = {toml_string(digest)}\n"
            for key, digest in found
        )

    return body


def codex_trust(codex_home: Path, cwd: Path) -> Callable[[Path], dict[str, str]]:
    """Our hooks' keys and hashes as Codex computes them (asked of `codex app-server`),
    or none when Codex is not installed here."""

    def trust(hooks_file: Path) -> dict[str, str]:
        codex = os.environ.get("AGENT_MEMORY_CODEX") or shutil.which("codex")
        if not codex:
            return {}
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
        process.wait(timeout=CODEX_TIMEOUT_S)
    return []


def gemini_hooks(program: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Gemini CLI's hooks (settings.json's, and the extension's hooks/hooks.json), its
    timeouts in milliseconds."""

    def handler(command: str) -> dict[str, Any]:
        return {"name": SERVER_NAME, "type": "command", "command": command, "timeout": 5000}

    return matcher_groups("gemini", handler, program)


def client_files(client: str, project: str | None) -> list[ConfigFile]:
    home = Path.home()
    root = Path(project).resolve() if project else None
    command_hook = {"type": "command", "timeout": 5}
    if client == "claude-code":
        settings = (root or home) / ".claude" / "settings.json"
        servers = root / ".mcp.json" if root else home / ".claude.json"
        server = {"type": "stdio", **mcp_server()}
        return [
            JsonFile(settings, lambda c: add_groups(c, matcher_groups(
                client, lambda cmd: {**command_hook, "command": cmd}))),
            JsonFile(servers, lambda c: with_servers(c, CLAUDE_SERVER_NAME, server),
                     (CLAUDE_SERVER_NAME,)),
        ]  # fmt: skip
    if client == "codex":
        user_home = Path(os.environ.get("CODEX_HOME") or home / ".codex")
        codex_home = root / ".codex" if root else user_home
        hooks_file = codex_home / "hooks.json"
        return [
            JsonFile(hooks_file, lambda c: add_groups(c, matcher_groups(
                client, lambda cmd: {**command_hook, "command": cmd}))),
            TomlBlock(codex_home / "config.toml", "mcp server", codex_server),
            TomlBlock(user_home / "config.toml", f"trust {hooks_file}",
                      codex_trusted(hooks_file, codex_trust(user_home, root or home))),
        ]  # fmt: skip
    if client == "gemini":
        settings = (root or home) / ".gemini" / "settings.json"

        def gemini(c: dict[str, Any]) -> None:
            add_groups(
                c,
                matcher_groups(
                    client,
                    lambda cmd: {
                        "name": SERVER_NAME,
                        "type": "command",
                        "command": cmd,
                        "timeout": 5000,
                    },
                ),
            )
            with_servers(c, SERVER_NAME, mcp_server(env="${name}"))

        return [JsonFile(settings, gemini)]  # fmt: skip
    if client == "cursor":
        folder = (root or home) / ".cursor"

        def cursor(c: dict[str, Any]) -> None:
            hooks = c.setdefault("hooks", {})
            for spec in CLIENTS[client].hooks:
                entry: dict[str, Any] = {"command": hook_command(client, spec), "timeout": 5}
                if spec.matcher:
                    entry["matcher"] = spec.matcher
                hooks[spec.event] = [*hooks.get(spec.event, []), entry]

        return [
            JsonFile(folder / "hooks.json", cursor, empty=(("version", 1),)),
            JsonFile(
                folder / "mcp.json",
                lambda c: with_servers(c, SERVER_NAME, mcp_server(env="${{env:{name}}}")),
            ),
        ]
    raise InstallError(f"no such client: {client}")


# ---- install and uninstall --------------------------------------------------------------


def record_path(path: Path) -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    return Path(state) / "agent-memory" / "installed" / f"{digest}.json"


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path} ({exc})") from exc


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.agent-memory")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)  # never half a file


def install(client: str, project: str | None = None) -> list[str]:
    done = []
    files = client_files(client, project)
    for config in files:  # every file read before any is written: none half-installed
        if isinstance(config, JsonFile):
            config.installed(read_text(config.path))
    for config in files:  # in order: Codex's trust is asked once its hooks.json is written
        before = read_text(config.path)
        after = config.installed(before)
        if after == before or (before is None and not after):
            done.append(f"unchanged: {config.path}")
            continue
        record = record_path(config.path)
        known = json.loads(read_text(record) or "null")
        original = known["original"] if known else before
        write_text(config.path, after)
        write_text(record, json.dumps({"path": str(config.path), "original": original,
                                       "written": after}))  # fmt: skip
        done.append(f"{'created' if before is None else 'updated'}: {config.path}")
    if client == "codex":
        done += codex_notes(files)
    return done


def codex_notes(files: list[ConfigFile]) -> list[str]:
    block = next(f for f in files if isinstance(f, TomlBlock) and f.tag.startswith("trust"))
    if TOML_BEGIN.format(tag=block.tag) in (read_text(block.path) or ""):
        return ["trusted: the hooks above, in Codex's hook trust"]
    return [
        "not yet trusted: Codex was not found here; in Codex, open /hooks and trust"
        " agent-memory's hooks (or run this again with codex on PATH)"
    ]


def uninstall(client: str, project: str | None = None) -> list[str]:
    done = []
    for config in client_files(client, project):
        current = read_text(config.path)
        record = record_path(config.path)
        known = json.loads(read_text(record) or "null")
        if current is None:
            record.unlink(missing_ok=True)
            continue
        if known and known.get("written") == current:  # untouched since: as it was
            original = known["original"]
            if original is None:
                config.path.unlink()
                done.append(f"removed: {config.path}")
            else:
                write_text(config.path, original)
                done.append(f"restored: {config.path}")
        else:
            after = config.uninstalled(current)
            if after == current or (
                isinstance(config, JsonFile) and config.read(current) == config.read(after)
            ):
                done.append(f"unchanged: {config.path}")
            else:
                write_text(config.path, after)
                done.append(f"updated: {config.path}")
        record.unlink(missing_ok=True)
    return done
