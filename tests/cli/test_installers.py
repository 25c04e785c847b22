"""`agent-memory-client install` / `uninstall` touch only what is theirs: a user's own MCP
server under the name ours would take, a user's comments and layout, a file the client
rewrote since, and a Codex project that is not trusted yet (issue 66, part 5)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agent_memory_client import install as installer
from agent_memory_client import jsonc, ours, provenance
from agent_memory_client.clients import CLIENTS
from agent_memory_client.install import codex as codex_install
from agent_memory_client.install import entries, toml_block

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-memory"
CODEX = CACHE / "codex" / "node_modules" / ".bin" / "codex"
GEMINI = CACHE / "gemini" / "node_modules" / ".bin" / "gemini"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own, with no Codex to ask (unless a test names one)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    monkeypatch.delenv("AGENT_MEMORY_CODEX", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return tmp_path


def recorded_servers(client: str) -> list[str]:
    """The names recorded for the client (by its agent name, whichever name installed it)."""
    names: dict[str, list[str]] = json.loads(ours.servers_file().read_text())["names"]
    return names.get(CLIENTS[client].name, [])


def as_gemini_reads(text: str) -> Any:
    """What Gemini CLI 0.61 does with a settings file: strip-json-comments (comments out,
    strings as they are), then JSON.parse."""
    kept, at, in_string = [], 0, False
    while at < len(text):
        char = text[at]
        if in_string:
            kept.append(text[at : at + 2] if char == "\\" else char)
            at += 2 if char == "\\" else 1
            in_string = char != '"'
        elif text.startswith("//", at):
            at = text.find("\n", at) if "\n" in text[at:] else len(text)
        elif text.startswith("/*", at):
            at = text.index("*/", at) + 2
        else:
            kept.append(char)
            in_string = char == '"'
            at += 1
    return json.loads("".join(kept))


# ---- a user's own server under the name ours would take ---------------------------------

CLAUDE_JSON = """{
  "numStartups": 12,
  "theme": "theirs-1",
  "mcpServers": {
    "memory": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-memory"
      ],
      "env": {}
    }
  }
}"""
GEMINI_SETTINGS = """{
  // mine
  "ui": {"theme": "theirs-1"},
  "mcpServers": {
    "agent-memory": {"command": "npx", "args": ["-y", "some-other-agent-memory"]} // not yours
  }
}
"""
CURSOR_MCP = """{
    "mcpServers": {
        "agent-memory": {"url": "https://memory.example/mcp", "headers": {"x": "theirs-1"}}
    }
}
"""
COPILOT_MCP = """{
  "mcpServers": {
    "agent-memory": {"type": "local", "command": "their-memory", "args": ["theirs-1"]}
  }
}
"""
# client: (the file, the name ours would take, the name it gets instead, the file's text)
USERS_OWN = {
    "claude-code": (".claude.json", "memory", "agent-memory", CLAUDE_JSON),
    "gemini": (".gemini/settings.json", "agent-memory", "agent-memory-2", GEMINI_SETTINGS),
    "cursor": (".cursor/mcp.json", "agent-memory", "agent-memory-2", CURSOR_MCP),
    "copilot": (".copilot/mcp-config.json", "agent-memory", "agent-memory-2", COPILOT_MCP),
}


@pytest.mark.parametrize("client", list(USERS_OWN))
def test_a_users_own_server_under_our_name_is_kept_and_ours_goes_in_beside_it(
    client: str, home: Path
) -> None:
    relative, wanted, given, text = USERS_OWN[client]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    theirs = jsonc.loads(text)["mcpServers"][wanted]
    their_text = re.search(rf'"{wanted}": \{{.*?\n?\s*\}}(?=,?\s*(//.*)?\n\s*\}})', text, re.S)
    assert their_text is not None

    said = installer.install(client)
    note = (
        f"named {given}: {path} already has an MCP server named {wanted} that is not this"
        " one (left as it is)"
    )
    assert note in said
    after = path.read_text()
    servers = jsonc.loads(after)["mcpServers"]
    assert servers[wanted] == theirs and their_text.group(0) in after  # byte for byte
    assert entries.runs_our_bridge(servers[given])
    assert not entries.runs_our_bridge(theirs)
    assert given in recorded_servers(client) and wanted not in recorded_servers(client)
    assert given in ours.our_servers() and wanted not in ours.our_servers()  # theirs

    again = installer.install(client)  # ours stays where it went, under its name
    assert f"unchanged: {path}" in again and note in again

    # Changed since (so not put back as it was): only ours goes, every other byte stays.
    path.write_text(path.read_text().replace("theirs-1", "theirs-2"))
    installer.uninstall(client)
    assert path.read_text() == text.replace("theirs-1", "theirs-2")
    assert given not in recorded_servers(client)


def test_codex_takes_another_name_beside_a_users_own_agent_memory_table(home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    text = (
        'model = "o3"\n\n# my own, not yours\n[mcp_servers.agent-memory]\ncommand = "npx"\n'
        'args = ["-y", "some-other-agent-memory"]\n'
    )
    config.write_text(text)

    said = installer.install("codex")
    assert (
        f"named agent-memory-2: {config} already has an MCP server named agent-memory that is"
        " not this one (left as it is)"
    ) in said
    servers = tomllib.loads(config.read_text())["mcp_servers"]  # still TOML: no table twice
    assert servers["agent-memory"] == {"command": "npx", "args": ["-y", "some-other-agent-memory"]}
    assert entries.runs_our_bridge(servers["agent-memory-2"])
    assert config.read_text().startswith(text)
    assert "agent-memory-2" in recorded_servers("codex")

    installer.uninstall("codex")
    assert config.read_text() == text
    assert "agent-memory-2" not in recorded_servers("codex")


@pytest.mark.parametrize(
    ("client", "theirs", "ourtool"),
    [
        ("codex", "mcp__agent-memory__search_memories", "mcp__agent-memory-2__search_memories"),
        ("gemini", "mcp_agent-memory_search_memories", "mcp_agent-memory-2_search_memories"),
    ],
)
def test_a_users_own_agent_memory_server_is_not_ours_for_provenance(
    client: str, theirs: str, ourtool: str, home: Path
) -> None:
    """Ours went in as `agent-memory-2`: a read of the user's own `agent-memory` server is
    another's, one of ours is not."""
    if client == "codex":
        path, text = (
            home / ".codex" / "config.toml",
            ('[mcp_servers.agent-memory]\ncommand = "npx"\nargs = ["-y", "some-other"]\n'),
        )
    else:
        path, text = home / ".gemini" / "settings.json", GEMINI_SETTINGS
    path.parent.mkdir(parents=True)
    path.write_text(text)
    # Nothing recorded yet (no install, or one from before the recording): `agent-memory`
    # is taken as ours, as an older install wrote it.
    assert not ours.servers_file().exists()
    assert provenance.is_own_tool(theirs)

    installer.install(client)
    assert recorded_servers(client) == ["agent-memory-2"]
    assert not provenance.is_own_tool(theirs)
    assert provenance.tool_sources(theirs, {"query": "x"}) == [f"tool:{theirs}"]
    assert provenance.is_own_tool(ourtool)
    assert provenance.tool_sources(ourtool, {"query": "x"}) == []
    # The plugin's server is ours by construction, recorded or not.
    assert provenance.is_own_tool("mcp__plugin_agent-memory_memory__search_memories")

    installer.uninstall(client)  # ours gone: the file, emptied, still says so
    assert path.read_text() == text
    assert not provenance.is_own_tool(theirs) and not provenance.is_own_tool(ourtool)


def test_a_claude_code_projects_own_server_under_our_name_is_a_clash_too(home: Path) -> None:
    """A server of one project in ~/.claude.json (Claude Code's local scope) would hide a
    user-scope server of the same name in that project."""
    text = json.dumps({"projects": {"/work/app": {"mcpServers": {
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}}},
        indent=2)  # fmt: skip
    (home / ".claude.json").write_text(text)
    said = installer.install("claude-code")
    assert any(line.startswith(f"named agent-memory: {home / '.claude.json'}") for line in said)
    assert entries.runs_our_bridge(
        json.loads((home / ".claude.json").read_text())["mcpServers"]["agent-memory"]
    )


def test_uninstall_removes_our_server_under_any_name_and_never_a_users(home: Path) -> None:
    """A file install never wrote (an older install, or by hand): ours are the entries
    whose command runs this client half's `mcp`, whatever their name."""
    project = home / "repo"
    project.mkdir()
    users = '"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}'
    text = (
        "{\n"
        '  "mcpServers": {\n'
        f"    {users},\n"
        '    "mem": {"command": "/opt/bin/agent-memory-client", "args": ["mcp"]},\n'
        '    "memory-py": {"command": "/usr/bin/python3", "args": ["-m", "agent_memory_client",'
        ' "mcp", "--tools", "agent"]},\n'
        '    "notes": {"command": "uvx agent-memory-client --url http://x:8080 mcp"},\n'
        '    "hooks-only": {"command": "agent-memory-client", "args": ["hook", "stop"]}\n'
        "  }\n"
        "}\n"
    )
    (project / ".mcp.json").write_text(text)

    installer.uninstall("claude-code", project=str(project))
    assert (project / ".mcp.json").read_text() == (
        "{\n"
        '  "mcpServers": {\n'
        f"    {users},\n"
        '    "hooks-only": {"command": "agent-memory-client", "args": ["hook", "stop"]}\n'
        "  }\n"
        "}\n"
    )


def test_a_project_install_records_the_name_it_wrote(home: Path) -> None:
    """No clash: the name the installer wrote (`memory`, as the plugin names it) is ours
    for provenance, until uninstall removes it."""
    project = home / "repo"
    project.mkdir()
    assert "memory" not in ours.our_servers("claude-code")
    installer.install("claude-code", project=str(project))
    assert "memory" in ours.our_servers("claude-code")
    assert "memory" not in ours.our_servers("gemini")
    installer.uninstall("claude-code", project=str(project))
    assert "memory" not in ours.our_servers("claude-code")


# ---- comments and layout ------------------------------------------------------------------

GEMINI_COMMENTED = """// Gemini CLI settings: mine, with my notes
{
  /* how I sign in */
  "security": {"auth": {"selectedType": "gemini-api-key"}}, // from GEMINI_API_KEY
  "mcpServers": {
    // docs, at https://docs.example/mcp (the // in the string below is no comment)
    "docs": {"httpUrl": "https://docs.example/mcp"}
  },
  "ui": {
    "theme": "GitHub" /* light */
  }
}
"""
COMMENTS = [
    "// Gemini CLI settings: mine, with my notes",
    "/* how I sign in */",
    "// from GEMINI_API_KEY",
    "// docs, at https://docs.example/mcp (the // in the string below is no comment)",
    "/* light */",
]


def test_commented_gemini_settings_keep_their_comments_through_install_and_uninstall(
    home: Path,
) -> None:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_COMMENTED)

    assert installer.install("gemini") == [f"updated: {settings}"]
    after = settings.read_text()
    assert [after.find(comment) for comment in COMMENTS] == sorted(
        after.find(comment) for comment in COMMENTS
    )
    assert all(comment in after for comment in COMMENTS)
    read = as_gemini_reads(after)  # the file still loads as Gemini CLI reads it
    assert read == jsonc.loads(after)
    assert read["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert read["ui"] == {"theme": "GitHub"}
    assert read["mcpServers"]["docs"] == {"httpUrl": "https://docs.example/mcp"}
    assert entries.runs_our_bridge(read["mcpServers"]["agent-memory"])
    assert set(read["hooks"]) == {spec.event for spec in CLIENTS["gemini"].hooks}
    assert installer.install("gemini") == [f"unchanged: {settings}"]

    # The user changes their theme after install: uninstall keeps that and every comment.
    settings.write_text(after.replace('"GitHub"', '"Dracula"'))
    assert installer.uninstall("gemini") == [f"updated: {settings}"]
    assert settings.read_text() == GEMINI_COMMENTED.replace('"GitHub"', '"Dracula"')


@pytest.mark.skipif(not GEMINI.exists(), reason="no Gemini CLI: ./scripts/agent-clients")
def test_the_real_gemini_cli_reads_the_commented_settings_install_wrote(home: Path) -> None:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_COMMENTED)
    installer.install("gemini")
    # An untrusted folder: Gemini lists its servers without starting any.
    listed = subprocess.run(
        [str(GEMINI), "mcp", "list"], cwd=home, capture_output=True, text=True, timeout=120,
        env={**os.environ, "HOME": str(home), "PATH": f"/usr/bin:/bin:{GEMINI.parent}"},
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    output = listed.stdout + listed.stderr
    assert "docs: https://docs.example/mcp" in output, output
    assert "agent-memory: " in output and " mcp --tools agent" in output, output
    assert "rror" not in output, output


def client_rewrites(path: Path, change: dict[str, Any]) -> dict[str, Any]:
    """A client rewrites its file as JSON.stringify writes it, with `change` merged in."""
    config = {**json.loads(path.read_text()), **change}
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False))
    return config


def test_uninstall_after_claude_code_rewrote_its_files_removes_only_ours(home: Path) -> None:
    """Claude Code rewrites ~/.claude.json (and settings.json) in its own way, with keys of
    its own and, here, a server the user added since: uninstall cannot put back what was,
    and takes out ours alone, leaving the rest as Claude Code wrote it."""
    (home / ".claude.json").write_text('{"numStartups": 1}')
    installer.install("claude-code")

    servers = json.loads((home / ".claude.json").read_text())["mcpServers"]
    state = client_rewrites(home / ".claude.json", {
        "numStartups": 2, "userID": "a1b2",
        "projects": {str(home / "repo"): {"allowedTools": [], "mcpServers": {}}},
        "mcpServers": {**servers, "github": {"type": "http", "url": "https://gh.example/mcp"}},
    })  # fmt: skip
    settings = client_rewrites(
        home / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(make:*)"]}}
    )

    said = installer.uninstall("claude-code")
    assert said == [f"updated: {home / '.claude' / 'settings.json'}",
                    f"updated: {home / '.claude.json'}"]  # fmt: skip
    del state["mcpServers"]["memory"]
    assert (home / ".claude.json").read_text() == json.dumps(state, indent=2)
    del settings["hooks"]
    assert (home / ".claude" / "settings.json").read_text() == json.dumps(settings, indent=2)


# The client half's path after its virtualenv moved: install again, to point at it.
MOVED = ["/opt/moved/venv/bin/agent-memory-client"]
GITHUB = {"type": "http", "url": "https://gh.example/mcp"}
# client: (the file holding our server, our server's name, its hooks file when another)
REWRITTEN = {
    "claude-code": (".claude.json", "memory", ".claude/settings.json"),
    "cursor": (".cursor/mcp.json", "agent-memory", ".cursor/hooks.json"),
    "gemini": (".gemini/settings.json", "agent-memory", None),
    "copilot": (".copilot/mcp-config.json", "agent-memory", ".copilot/hooks/agent-memory.json"),
}


@pytest.mark.parametrize("client", list(REWRITTEN))
def test_install_again_after_the_client_rewrote_its_file_then_uninstall_removes_only_ours(
    client: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed; then the client rewrites its file (keys of its own) and the user adds a
    server; then install again (the client half moved). Uninstall cannot put back the
    file as it was before the first install (that would lose both): it takes out ours."""
    relative, name, hooks = REWRITTEN[client]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"numStartups": 1}')
    installer.install(client)

    servers = json.loads(path.read_text())["mcpServers"]
    state = client_rewrites(path, {"numStartups": 2, "mcpServers": {**servers, "github": GITHUB}})
    monkeypatch.setattr(entries, "client_command", lambda: MOVED)
    said = installer.install(client)
    assert f"updated: {path}" in said
    servers = json.loads(path.read_text())["mcpServers"]
    assert servers["github"] == GITHUB and servers[name]["command"] == MOVED[0]

    installer.uninstall(client)
    del state["mcpServers"][name]
    state.pop("hooks", None)
    assert path.read_text() == json.dumps(state, indent=2)
    if hooks:  # created by install, and changed by install alone since: gone
        assert not (home / hooks).exists()
    assert name not in recorded_servers(client)


def test_copilot_hooks_go_in_a_file_of_their_own_which_install_again_rewrites(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copilot CLI reads every `*.json` of its hooks folder (COPILOT_HOME's, else
    ~/.copilot's): ours is agent-memory.json, a `bash` command line each (ours wherever the
    client half ran from: install again replaces them), the user's own files left be."""
    copilot_home = home / "copilot-home"
    monkeypatch.setenv("COPILOT_HOME", str(copilot_home))
    theirs = copilot_home / "hooks" / "theirs.json"
    theirs.parent.mkdir(parents=True)
    theirs.write_text('{"version": 1, "hooks": {"sessionEnd": [{"bash": "notify-send bye"}]}}')
    installer.install("copilot")
    ours_file = copilot_home / "hooks" / "agent-memory.json"
    written = json.loads(ours_file.read_text())
    assert written["version"] == 1
    assert sorted(written["hooks"]) == sorted(spec.event for spec in CLIENTS["copilot"].hooks)
    [post] = written["hooks"]["postToolUse"]
    assert post["type"] == "command" and post["timeoutSec"] == 5 and post["matcher"]
    assert post["bash"].endswith(" hook --client copilot postToolUse")
    server = json.loads((copilot_home / "mcp-config.json").read_text())["mcpServers"]
    assert server["agent-memory"]["args"][-3:] == ["mcp", "--tools", "agent"]
    assert "env" not in server["agent-memory"]  # Copilot CLI hands its environment whole

    monkeypatch.setattr(entries, "client_command", lambda: MOVED)
    installer.install("copilot")
    commands = [e["bash"] for entries in json.loads(ours_file.read_text())["hooks"].values()
                for e in entries]  # fmt: skip
    assert len(commands) == len(CLIENTS["copilot"].hooks)
    assert all(c.startswith(f"{MOVED[0]} hook --client copilot ") for c in commands)
    installer.uninstall("copilot")
    assert not ours_file.exists() and not (copilot_home / "mcp-config.json").exists()
    assert json.loads(theirs.read_text())["hooks"]["sessionEnd"] == [{"bash": "notify-send bye"}]


def test_a_copilot_project_install_says_when_the_repository_s_mcp_json_is_read_instead(
    home: Path,
) -> None:
    """A repository's hooks go in .github/hooks/, its server in .github/mcp.json, which
    Copilot CLI reads only where the repository has no .mcp.json (seen in 1.0.102): install
    says so, and whether that .mcp.json runs this bridge already."""
    project = home / "repo"
    project.mkdir()
    said = installer.install("copilot", project=str(project))
    assert f"created: {project / '.github' / 'hooks' / 'agent-memory.json'}" in said
    assert f"created: {project / '.github' / 'mcp.json'}" in said
    assert not any(".mcp.json" in line for line in said)
    installer.uninstall("copilot", project=str(project))
    assert not (project / ".github" / "mcp.json").exists()

    (project / ".mcp.json").write_text('{"mcpServers": {"docs": {"command": "docs-mcp"}}}')
    said = installer.install("copilot", project=str(project))
    assert any(line.startswith(f"not read while {project / '.mcp.json'} exists") for line in said)
    installer.uninstall("copilot", project=str(project))

    (project / ".mcp.json").unlink()
    installer.install("claude-code", project=str(project))  # our bridge, named `memory`
    said = installer.install("copilot", project=str(project))
    kept = f"kept: {project / '.mcp.json'} is read instead of {project / '.github' / 'mcp.json'}"
    assert any(line.startswith(kept) and "server memory" in line for line in said)


def test_install_again_after_claude_code_rewrote_its_settings_keeps_its_keys(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """settings.json, created by install, rewritten by Claude Code since: not removed."""
    settings_path = home / ".claude" / "settings.json"
    installer.install("claude-code")
    settings = client_rewrites(settings_path, {"permissions": {"allow": ["Bash(make:*)"]}})
    monkeypatch.setattr(entries, "client_command", lambda: MOVED)
    assert f"updated: {settings_path}" in installer.install("claude-code")
    assert MOVED[0] in settings_path.read_text()

    installer.uninstall("claude-code")
    del settings["hooks"]
    assert settings_path.read_text() == json.dumps(settings, indent=2)
    assert not (home / ".claude.json").exists()  # untouched since: as it was (none)


def gemini_cli(home: Path, *args: str) -> str:
    done = subprocess.run(
        [str(GEMINI), *args], cwd=home, capture_output=True, text=True, timeout=120,
        env={**os.environ, "HOME": str(home), "PATH": f"/usr/bin:/bin:{GEMINI.parent}"},
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.skipif(not GEMINI.exists(), reason="no Gemini CLI: ./scripts/agent-clients")
def test_after_the_real_gemini_cli_rewrote_commented_settings_uninstall_removes_only_ours(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini CLI 0.61 rewrites settings.json (comment-json: the comments kept, the layout
    its own) when the user adds a server; install again, then uninstall: ours goes, the
    user's server and every comment stay."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_COMMENTED)
    installer.install("gemini")
    gemini_cli(home, "mcp", "add", "--scope", "user", "-t", "http", "github", GITHUB["url"])
    rewritten = settings.read_text()
    assert '"github"' in rewritten and all(comment in rewritten for comment in COMMENTS)

    monkeypatch.setattr(entries, "client_command", lambda: MOVED)
    assert installer.install("gemini") == [f"updated: {settings}"]
    installer.uninstall("gemini")
    after = settings.read_text()
    expected = jsonc.loads(GEMINI_COMMENTED)
    expected["mcpServers"]["github"] = {"url": GITHUB["url"], "type": "http"}
    assert as_gemini_reads(after) == expected
    assert [after.find(comment) for comment in COMMENTS] == sorted(
        after.find(comment) for comment in COMMENTS
    ) and all(comment in after for comment in COMMENTS)
    assert "agent-memory" not in after
    assert "docs: https://docs.example/mcp" in gemini_cli(home, "mcp", "list")


def test_uninstall_after_codex_rewrote_config_toml_removes_only_ours(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What Codex 0.171 does to our block when it rewrites config.toml: `codex mcp add`
    drops the line that opens it and puts its table before the one that closes it;
    `codex features enable` puts `[features]` inside it. Install again (the client half
    moved), then uninstall: ours goes, Codex's and the user's tables stay."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n')
    installer.install("codex")
    begin, end = (
        toml_block.TOML_BEGIN.format(tag="mcp server"),
        toml_block.TOML_END.format(tag="mcp server"),
    )
    text = config.read_text()
    github = '\n[mcp_servers.github]\ncommand = "npx"\nargs = ["-y", "gh-mcp"]\n'
    config.write_text(text.replace(f"\n{begin}\n", "\n").replace(end, github.lstrip() + end))
    monkeypatch.setattr(entries, "client_command", lambda: MOVED)
    installer.install("codex")
    again = tomllib.loads(config.read_text())
    assert set(again["mcp_servers"]) == {"github", "agent-memory"}
    assert again["mcp_servers"]["agent-memory"]["command"] == MOVED[0]

    text = config.read_text()
    config.write_text(text.replace(end, "\n[features]\nhooks = true\n" + end))
    installer.uninstall("codex")
    assert config.read_text() == (f'model = "o3"\n{github}\n[features]\nhooks = true\n')


@pytest.mark.skipif(not CODEX.exists(), reason="no Codex CLI: ./scripts/agent-clients")
def test_after_the_real_codex_rewrote_config_toml_uninstall_removes_only_ours(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_MEMORY_CODEX", str(CODEX))
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('# mine\nmodel = "o3"\n')

    def codex(*args: str) -> None:
        done = subprocess.run(
            [str(CODEX), *args], cwd=home, capture_output=True, text=True, timeout=120,
            env={**os.environ, "HOME": str(home), "CODEX_HOME": str(config.parent)},
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr

    installer.install("codex")
    assert "[hooks.state." in config.read_text()  # trusted: a second block, same file
    codex("mcp", "add", "github", "--", "npx", "-y", "gh-mcp")
    monkeypatch.setattr(entries, "client_command", lambda: MOVED)
    installer.install("codex")
    codex("features", "enable", "hooks")
    installer.uninstall("codex")

    after = config.read_text()
    assert tomllib.loads(after) == {
        "model": "o3",
        "mcp_servers": {"github": {"command": "npx", "args": ["-y", "gh-mcp"]}},
        "features": {"hooks": True},
    }
    assert after.startswith('# mine\nmodel = "o3"\n') and "agent-memory" not in after


# ---- a Codex project that is not trusted yet --------------------------------------------


def trust_lines(note: str) -> str:
    """The table the note asks the user to put in their config.toml, as it gives it."""
    lines = [line.strip() for line in note.splitlines()[1:3]]
    assert lines[0].startswith("[projects.") and lines[1] == 'trust_level = "trusted"'
    return "\n".join(lines) + "\n"


def test_a_codex_project_install_says_the_project_is_not_trusted_and_how_to_trust_it(
    home: Path,
) -> None:
    project = home / "repo"
    (project / ".git").mkdir(parents=True)
    user_config = home / ".codex" / "config.toml"

    said = installer.install("codex", project=str(project))
    [note] = [line for line in said if line.startswith("not yet trusted")]
    assert f"{project} is not trusted yet" in note and str(user_config) in note
    assert "Codex was not found" not in note  # not the reason
    assert note.endswith(f"`agent-memory-client install codex --project {project}` again"
                         " to trust these hooks")  # fmt: skip
    assert not user_config.exists()  # trusting a project is the user's to do

    user_config.parent.mkdir()
    user_config.write_text(trust_lines(note))
    assert tomllib.loads(user_config.read_text())["projects"][str(project)] == {
        "trust_level": "trusted"
    }
    said = installer.install("codex", project=str(project))
    assert codex_install.NOT_FOUND in said  # trusted: what is left is Codex's hook trust

    user_config.write_text(trust_lines(note).replace('"trusted"', '"untrusted"'))
    [note] = [line for line in installer.install("codex", project=str(project))
              if line.startswith("not yet trusted")]  # fmt: skip
    assert f"{project} is marked untrusted" in note


@pytest.mark.skipif(not CODEX.exists(), reason="no Codex CLI: ./scripts/agent-clients")
def test_the_real_codex_runs_a_projects_hooks_only_once_the_project_is_trusted(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex 0.171 lists none of an untrusted project's hooks (the note's reason); once
    the project is trusted as the note says, install has Codex's hashes and trusts them."""
    monkeypatch.setenv("AGENT_MEMORY_CODEX", str(CODEX))
    project = home / "repo"
    (project / ".git").mkdir(parents=True)
    user_config = home / ".codex" / "config.toml"
    hooks_file = project / ".codex" / "hooks.json"
    ask = codex_install.codex_trust(home / ".codex", project)

    said = installer.install("codex", project=str(project))
    [note] = [line for line in said if line.startswith("not yet trusted")]
    assert f"{project} is not trusted yet" in note
    user_config.parent.mkdir(exist_ok=True)
    assert ask(hooks_file) == {}  # Codex itself does not read the project's hooks

    user_config.write_text(trust_lines(note))
    said = installer.install("codex", project=str(project))
    assert "trusted: the hooks above, in Codex's hook trust" in said
    trusted = tomllib.loads(user_config.read_text())["hooks"]["state"]
    assert set(trusted) == set(ask(hooks_file) or {}) and len(trusted) == len(
        CLIENTS["codex"].hooks
    )


# ---- the JSONC editor ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "expected"),
    [
        ('{\n  "a": 1, // a\n  "b": 2\n}\n', {"a": 1}, '{\n  "a": 1 // a\n}\n'),
        ('{\n  "a": 1, // a\n  "b": 2\n}\n', {"b": 2}, '{\n  // a\n  "b": 2\n}\n'),
        ('{"a": 1, "b": 2}', {"a": 1, "c": [3]}, '{"a": 1, "c": [3]}'),
        ('{\n\t"a": 1 /* x */\n}', {"a": 1, "c": {"d": 4}},
         '{\n\t"a": 1, /* x */\n\t"c": {\n\t\t"d": 4\n\t}\n}'),
        ('{\r\n  "a": [\r\n    1\r\n  ]\r\n}\r\n', {"a": [1, 2]},
         '{\r\n  "a": [\r\n    1,\r\n    2\r\n  ]\r\n}\r\n'),
        ('// top\n{\n  "a": 1,\n  "b": 2\n}\n', {}, "// top\n{}\n"),
        ('{\n  // keep\n  "a": 1\n}', {}, "{\n  // keep\n}"),
        ('{"a": "// no comment", "b": 1}', {"a": "// no comment"}, '{"a": "// no comment"}'),
    ],
)  # fmt: skip
def test_an_edit_changes_only_what_changes(text: str, value: Any, expected: str) -> None:
    assert jsonc.edited(text, value) == expected


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice([1, "s", "a // b", True, None, 2.5, "/* c */"])
    if roll < 0.7:
        return {
            f"k{rng.randrange(6)}": random_value(rng, depth + 1) for _ in range(rng.randrange(4))
        }
    return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def commented(rng: random.Random, value: Any, indent: str, level: int = 0) -> str:
    """`value` laid out on lines, with comments after some commas and before some ends."""
    pad, inner = indent * level, indent * (level + 1)
    if isinstance(value, dict | list) and value:
        items = (
            [f"{json.dumps(k)}: {commented(rng, v, indent, level + 1)}" for k, v in value.items()]
            if isinstance(value, dict)
            else [commented(rng, v, indent, level + 1) for v in value]
        )
        separator = "".join(("," + rng.choice(["", " // c", " /* c */"]), "\n", inner))
        ends = "{}" if isinstance(value, dict) else "[]"
        return (
            f"{ends[0]}\n{inner}{separator.join(items)}{rng.choice(['', ' // e'])}\n{pad}{ends[1]}"
        )
    return json.dumps(value)


def mutated(rng: random.Random, value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: mutated(rng, v) for k, v in value.items() if rng.random() > 0.25}
        return {
            **kept,
            **{f"n{rng.randrange(4)}": random_value(rng, 2) for _ in range(rng.randrange(3))},
        }
    if isinstance(value, list):
        kept_items = [mutated(rng, v) for v in value if rng.random() > 0.3]
        return kept_items + [random_value(rng, 2) for _ in range(rng.randrange(2))]
    return value if rng.random() < 0.8 else random_value(rng, 3)


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)  # true is not 1


def test_any_edit_reads_back_as_the_value_and_keeps_the_text_of_what_it_leaves() -> None:
    rng = random.Random(66)
    for _ in range(400):
        value = {"theirs": random_value(rng), "ours": random_value(rng)}
        text = commented(rng, value, rng.choice(["  ", "    ", "\t"]))
        target = mutated(rng, value)
        out = jsonc.edited(text, target)
        assert as_json(jsonc.loads(out)) == as_json(target), (text, target, out)
        assert jsonc.edited(out, target) == out  # nothing left to change
        if "theirs" in target and as_json(target["theirs"]) == as_json(value["theirs"]):
            node = jsonc.parse(text)
            theirs = node.children[node.keys.index("theirs")]
            assert text[theirs.start : theirs.end] in out


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ('{"a": 1,}', "a comma before '}'"),
        ('{"a": 1 /* never ends', "a comment that never ends"),
        ('{"a": NaN}', "a value was expected"),
        ('{"a": 1} {"b": 2}', "more after the end"),
    ],
)
def test_what_json_parse_refuses_is_refused_saying_where(text: str, refused: str) -> None:
    with pytest.raises(jsonc.JsoncError, match=re.escape(refused) + r".*\(line 1 column \d+\)"):
        jsonc.loads(text)
