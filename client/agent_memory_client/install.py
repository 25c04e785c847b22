"""`agent-memory-client install|uninstall CLIENT [--project DIR]`: the client's own
configuration files, with our hooks (the adapter's HookSpecs) and the MCP bridge merged in.

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
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory_client import jsonc
from agent_memory_client.clients import CLIENTS, HookSpec
from agent_memory_client.ours import SERVER_NAME, forget_server, record_server

CLAUDE_SERVER_NAME = "memory"  # as the plugin names it: its tools keep their names
TOML_BEGIN = "# >>> agent-memory ({tag}): written by `agent-memory-client install codex`"
TOML_END = "# <<< agent-memory ({tag})"
# What the bridge reads of its environment, which Codex, Gemini CLI and Cursor do not all
# hand an MCP server whole (Gemini CLI redacts what looks like a key).
BRIDGE_ENV = ("AGENT_MEMORY_URL", "AGENT_MEMORY_API_KEY", "AGENT_MEMORY_REPO")
NOT_FOUND = (
    "not yet trusted: Codex was not found here; in Codex, open /hooks and trust"
    " agent-memory's hooks (or run this again with codex on PATH)"
)


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


def clash_note(path: Path, wanted: str, name: str) -> str:
    return (
        f"named {name}: {path} already has an MCP server named {wanted} that is not this"
        " one (left as it is)"
    )


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
class Change:
    """A configuration file's text after install or uninstall, and what to say of it."""

    text: str
    server: str | None = None  # the name our MCP server has in it
    notes: tuple[str, ...] = ()


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


@dataclass(frozen=True, slots=True)
class TomlBlock:
    """Codex's config.toml: our tables in one marked block at its end (TOML tables may
    stand anywhere), removed by uninstall. `body` makes them, given the rest of the file
    as TOML reads it.

    Codex rewrites the file its own way (0.171): `codex mcp add` drops the comment that
    opens our block and puts its table before the one that closes it; `codex features
    enable` puts `[features]` inside the block. So uninstall takes out our tables (`ours`
    says which, given its key path, its value and whether it stands between our markers)
    and our markers, never another table, and checks that TOML then reads the file as it
    did without ours."""

    path: Path
    tag: str  # which block: the MCP server, or the trust of one hooks.json
    body: Callable[[dict[str, Any]], Change]
    ours: Callable[[tuple[str, ...], Any, bool], bool] = lambda path, value, marked: False

    def check(self, text: str | None) -> None:
        self.rest(text)

    def installed(self, text: str | None) -> Change:
        rest, document = self.rest(text)
        change = self.body(document)
        if not change.text:
            return Change(rest if text is not None else "", change.server, change.notes)
        begin, end = self.markers()
        after = f"{rest}\n{begin}\n{change.text}{end}\n"
        try:
            tomllib.loads(after)
        except tomllib.TOMLDecodeError as exc:
            raise InstallError(
                f"{self.path} cannot take our tables ({exc}; its own define them otherwise):"
                f" add them yourself:\n{change.text}"
            ) from exc
        return Change(after, change.server, change.notes)

    def uninstalled(self, text: str) -> Change:
        span = self.span(text)
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError:  # rest() says what is wrong with it
            return Change(text if span is None else text[: span[0]] + text[span[1] :])
        lines = text.splitlines(keepends=True)
        tables = self.our_tables(lines, document)
        if span is not None:  # the block as install wrote it, nothing else put in it since
            starts = [sum(map(len, lines[:at])) for at, _, _ in tables]
            inside = [path for (_, _, path), at in zip(tables, starts, strict=True)
                      if span[0] <= at < span[1]]  # fmt: skip
            cut = text[: span[0]] + text[span[1] :]
            if toml_read(cut) == toml_without(document, inside):
                return self.uninstalled(cut)  # and what stands elsewhere
        markers = {at for at, line in enumerate(lines) if line.rstrip("\r\n") in self.markers()}
        ours = markers.union(*(range(start, end) for start, end, _ in tables))
        for cut_at, paths in ((ours, [path for _, _, path in tables]), (markers, [])):
            after = cut_lines(lines, cut_at)
            if toml_read(after) == toml_without(document, paths):
                return Change(after)
        return Change(text)

    def markers(self) -> tuple[str, str]:
        return TOML_BEGIN.format(tag=self.tag), TOML_END.format(tag=self.tag)

    def span(self, text: str) -> tuple[int, int] | None:
        """Where our block is in `text` (from the line break before it), if it is whole."""
        begin_line, end_line = self.markers()
        begin = text.find(f"\n{begin_line}\n")
        end = text.find(f"\n{end_line}\n", begin) if begin >= 0 else -1
        if begin >= 0 and end < 0 and text.endswith(f"\n{end_line}"):
            end = len(text) - len(end_line) - 1
        return None if end < 0 else (begin, end + len(end_line) + 2)

    def our_tables(
        self, lines: list[str], document: dict[str, Any]
    ) -> list[tuple[int, int, tuple[str, ...]]]:
        """Our tables: the lines each stands on (from its header to its last key), and
        its key path."""
        begin, end = self.markers()
        marked, between = set(), False
        for at, line in enumerate(lines):
            between = (between or line.rstrip("\r\n") == begin) and line.rstrip("\r\n") != end
            if between:
                marked.add(at)
        return [
            (start, stop, path)
            for start, stop, path in toml_tables(lines)
            if path and self.ours(path, toml_value(document, path), start in marked)
        ]

    def our_servers(self, text: str | None) -> set[str]:
        """Our MCP servers in it (one the user wrote, their own way, is theirs to remove)."""
        lines = (text or "").splitlines(keepends=True)
        try:
            document = tomllib.loads(text or "")
        except tomllib.TOMLDecodeError:
            return set()
        found = self.our_tables(lines, document)
        return {path[1] for _, _, path in found if path[0] == "mcp_servers" and len(path) == 2}

    def rest(self, text: str | None) -> tuple[str, dict[str, Any]]:
        """The file without our tables, and what TOML reads of it."""
        rest = self.uninstalled(text or "").text
        try:
            return rest, tomllib.loads(rest)
        except tomllib.TOMLDecodeError as exc:
            raise InstallError(f"{self.path} is not TOML ({exc}): fix it, then again") from exc


ConfigFile = JsonFile | TomlBlock


def toml_tables(lines: list[str]) -> list[tuple[int, int, tuple[str, ...] | None]]:
    """Each table of a TOML file: the lines from its header to its last key (a comment or
    a blank line after that belongs to what follows), and its key path (None: an array of
    tables)."""
    headers: list[tuple[int, tuple[str, ...] | None]] = []
    for at, line in enumerate(lines):
        if not line.lstrip().startswith("["):
            continue
        try:
            found: Any = tomllib.loads(line)
        except tomllib.TOMLDecodeError:
            continue  # a line of a value, not a header
        keys: list[str] = []
        while isinstance(found, dict) and len(found) == 1:
            key, found = next(iter(found.items()))
            keys.append(key)
        headers.append((at, tuple(keys) if found == {} else None))
    tables = []
    for index, (at, path) in enumerate(headers):
        stop = headers[index + 1][0] if index + 1 < len(headers) else len(lines)
        while stop > at + 1 and lines[stop - 1].strip()[:1] in ("", "#"):
            stop -= 1
        tables.append((at, stop, path))
    return tables


def toml_value(document: dict[str, Any], path: tuple[str, ...]) -> Any:
    found: Any = document
    for key in path:
        found = found.get(key) if isinstance(found, dict) else None
    return found


def toml_without(document: dict[str, Any], paths: list[tuple[str, ...]]) -> str:
    """What TOML should read once `paths` are gone, as toml_read() says it."""
    copy = json.loads(json.dumps(document, default=str))
    for path in paths:
        parent = toml_value(copy, path[:-1])
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    return json.dumps(toml_pruned(copy), sort_keys=True)


def toml_read(text: str) -> str | None:
    """What TOML reads of `text`, to compare (empty tables not told apart)."""
    try:
        document = json.loads(json.dumps(tomllib.loads(text), default=str))
    except tomllib.TOMLDecodeError:
        return None
    return json.dumps(toml_pruned(document), sort_keys=True)


def toml_pruned(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: toml_pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v != {}}
    if isinstance(value, list):
        return [toml_pruned(v) for v in value]
    return value


def cut_lines(lines: list[str], cut: set[int]) -> str:
    """`lines` without those at `cut`; a blank line that would then follow another (or
    start the file) goes too."""
    kept: list[str] = []
    for at, line in enumerate(lines):
        if at in cut:
            continue
        if not line.strip() and at - 1 in cut and (not kept or not kept[-1].strip()):
            continue
        kept.append(line)
    return "".join(kept)


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


def toml_string(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is written as JSON writes one


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


def codex_user_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


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


def gemini_hooks(program: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Gemini CLI's hooks (settings.json's, and the extension's hooks/hooks.json), its
    timeouts in milliseconds."""

    def handler(command: str) -> dict[str, Any]:
        return {"name": SERVER_NAME, "type": "command", "command": command, "timeout": 5000}

    return matcher_groups("gemini", handler, program)


def hook_entries(
    client: str, handler: Callable[[str], dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Cursor's and Copilot CLI's shape: event -> entries, each a command of its own, its
    matcher beside it."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for spec in CLIENTS[client].hooks:
        entry = handler(hook_command(client, spec))
        if spec.matcher:
            entry["matcher"] = spec.matcher
        hooks.setdefault(spec.event, []).append(entry)
    return hooks


def cursor_hooks() -> dict[str, list[dict[str, Any]]]:
    """Cursor's hooks.json."""
    return hook_entries("cursor", lambda command: {"command": command, "timeout": 5})


def copilot_hooks() -> dict[str, list[dict[str, Any]]]:
    """Copilot CLI's hooks file (version 1): a `bash` command line, its timeout in seconds."""
    return hook_entries(
        "copilot", lambda command: {"type": "command", "bash": command, "timeoutSec": 5}
    )


def copilot_home() -> Path:
    return Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot")


def client_files(client: str, project: str | None) -> list[ConfigFile]:
    home = Path.home()
    root = Path(project).resolve() if project else None

    def command_hook(command: str) -> dict[str, Any]:
        return {"type": "command", "timeout": 5, "command": command}

    if client == "claude-code":
        settings = (root or home) / ".claude" / "settings.json"
        servers = root / ".mcp.json" if root else home / ".claude.json"
        server = McpEntry(CLAUDE_SERVER_NAME, {"type": "stdio", **mcp_server()})
        return [
            JsonFile(settings, hooks=matcher_groups(client, command_hook)),
            JsonFile(servers, server=server),
        ]
    if client == "codex":
        user_home = codex_user_home()
        codex_home = root / ".codex" if root else user_home
        hooks_file = codex_home / "hooks.json"
        trust = codex_trusted(hooks_file, codex_trust(user_home, root or home), root)
        return [
            JsonFile(hooks_file, hooks=matcher_groups(client, command_hook)),
            TomlBlock(codex_home / "config.toml", "mcp server",
                      codex_server(codex_home / "config.toml"), our_codex_server),
            TomlBlock(user_home / "config.toml", f"trust {hooks_file}", trust,
                      our_codex_trust(hooks_file)),
        ]  # fmt: skip
    if client == "gemini":
        server = McpEntry(SERVER_NAME, mcp_server(env="${name}"))
        return [JsonFile((root or home) / ".gemini" / "settings.json", gemini_hooks(), server)]
    if client == "cursor":
        folder = (root or home) / ".cursor"
        server = McpEntry(SERVER_NAME, mcp_server(env="${{env:{name}}}"))
        return [
            JsonFile(folder / "hooks.json", hooks=cursor_hooks(), empty=(("version", 1),)),
            JsonFile(folder / "mcp.json", server=server),
        ]
    if client == "copilot":
        # The environment reaches its MCP servers whole (an unset `${NAME}` would stay
        # literal): no `env`. `type` and `tools` as `copilot mcp add` writes them.
        server = McpEntry(SERVER_NAME, {"type": "local", **mcp_server(), "tools": ["*"]})
        hooks = JsonFile(
            (root / ".github" if root else copilot_home()) / "hooks" / "agent-memory.json",
            hooks=copilot_hooks(), empty=(("version", 1),),
        )  # fmt: skip
        if root is None:
            return [hooks, JsonFile(copilot_home() / "mcp-config.json", server=server)]
        # A repository's .mcp.json, which Claude Code reads too, is read first and alone.
        return [hooks, JsonFile(root / ".github" / "mcp.json", server=server,
                                read_first=root / ".mcp.json")]  # fmt: skip
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
            record_server(client, change.server)
        done += change.notes
    return done


def uninstall(client: str, project: str | None = None) -> list[str]:
    done = []
    for config in client_files(client, project):
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
            forget_server(client, name)
    return done
