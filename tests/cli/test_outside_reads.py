"""What came from outside stays outside, within a session (client/agent_memory_client/
outside/): a file a clone, a download or an unpacked archive put on disk, read later by a
file tool, a search or the shell; a browser's later read of the page it opened; a subagent's
report whose own calls the transcript does not hold. One rule for the history import
(across one transcript) and the live hooks (across hook calls, in the session's state).

Each class was met as a missed read in a real session of the development corpus
(../shared/data/sessions, `bench.capture`), and each test is named there by that session's
id, over payloads written for the test in that client's shapes (the corpus's text is never
copied)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from agent_memory_client.clients import CLIENTS
from agent_memory_client.clients.base import shell_call
from agent_memory_client.history import Transcript, codex
from agent_memory_client.history.capture import drafts_of, outsider_reads
from agent_memory_client.loop import Event
from agent_memory_client.loop.state import load
from agent_memory_client.outside import (
    MAX_PATHS,
    OUTSIDE_CHARS,
    PATH_CHARS,
    Outside,
)
from agent_memory_client.protocol import SOURCE_CHARS
from tests.helpers.transcripts import (
    call,
    claude,
    codex_line,
    function_call,
    function_output,
    jsonl,
)

CLONE = "https://github.com/other/lib.git"
REPO = "acme/api"
MISSING = "Traceback\nModuleNotFoundError: No module named 'helper'"


def flagged(transcript: Transcript, repo: str = REPO) -> dict[str, list[str]]:
    """The calls that read an outsider's text, by anchor, with what they read."""
    found: dict[str, list[str]] = {}
    for moment, read in outsider_reads(transcript, repo):
        if read:
            found.setdefault(moment.anchor, [])
            found[moment.anchor] += [s for s in read if s not in found[moment.anchor]]
    return found


def progress(n: int, cwd: str, parent: str, message: dict[str, Any]) -> dict[str, Any]:
    """A subagent's message as Claude Code 2.1.x records it, under the call that started it."""
    return {
        "type": "progress",
        "sessionId": "s-1",
        "cwd": cwd,
        "timestamp": f"2026-10-01T11:00:{n:02d}Z",
        "parentToolUseID": parent,
        "data": {"type": "agent_progress", "message": message},
    }


def sub_call(
    n: int, cwd: str, parent: str, tool: str, tool_input: dict[str, Any], output: str
) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": f"s{n}", "name": tool, "input": tool_input}
    done = {"type": "tool_result", "tool_use_id": f"s{n}", "content": output}
    return [
        progress(n, cwd, parent, {"type": "assistant", "message": {"role": "assistant",
                                                                   "content": [use]}}),
        progress(n, cwd, parent, {"type": "user", "message": {"role": "user", "content": [done]}}),
    ]  # fmt: skip


def test_a_cloned_repositorys_files_are_its_authors_codyborders_pup_mcp_311dfedb(
    tmp_path: Path,
) -> None:
    """codyborders__pup-mcp 311dfedb: a subagent clones another's repository into /tmp,
    then reads its files with Read, Grep and the shell. Each read is the repository's
    authors' text; a listing of its names is not, nor is a search printing names only."""
    cwd = "/home/dev/api"
    research = {"description": "Find the CLI's commands", "prompt": f"Look at {CLONE}"}
    steps = [
        *sub_call(1, cwd, "t1", "Bash", {"command": f"cd /tmp && git clone {CLONE}"}, "Cloning"),
        *sub_call(2, cwd, "t1", "Read", {"file_path": "/tmp/lib/cmd/root.go"}, "package cmd"),
        *sub_call(3, cwd, "t1", "Bash", {"command": 'grep -n "Run" /tmp/lib/cmd/root.go'}, "1:x"),
        *sub_call(4, cwd, "t1", "Bash", {"command": "cd /tmp/lib && grep -h AddCommand cmd/*.go"
                                         " | sort -u | head -50"}, "AddCommand(x)"),
        *sub_call(5, cwd, "t1", "Grep", {"pattern": "Run", "path": "/tmp/lib",
                                         "output_mode": "content"}, "root.go:1:x"),
        *sub_call(6, cwd, "t1", "Bash", {"command": "ls -la /tmp/lib/cmd"}, "root.go"),
        *sub_call(7, cwd, "t1", "Bash", {"command": 'find /tmp/lib -name "*.go" | head'}, "x.go"),
        *sub_call(8, cwd, "t1", "Bash", {"command": "grep -l AddCommand /tmp/lib/cmd/*.go"}, "a"),
        *sub_call(9, cwd, "t1", "Grep", {"pattern": "Run", "path": "/tmp/lib"}, "root.go"),
        *sub_call(10, cwd, "t1", "Read", {"file_path": f"{cwd}/src/server.py"}, "import x"),
        *call(1, "Task", research, "the commands are ...", cwd),
    ]  # fmt: skip
    assert flagged(claude(tmp_path, steps)) == {
        "s1": [CLONE],  # the clone itself (provenance.py's rule)
        "s2": [CLONE],
        "s3": [CLONE],
        "s4": [CLONE],
        "s5": [CLONE],
    }


def test_a_clone_into_a_folder_mktemp_made_codex_entityprocess_agentv_019f1111(
    tmp_path: Path,
) -> None:
    """EntityProcess__agentv 019f1111: Codex clones another's repository into a folder
    `mktemp -d` makes, then reads it with `rg` and `sed -n` by the folder's real name. A
    `sed` of the session's own file is its own; a clone of its own repository is its own."""
    cwd = "/home/dev/api"
    clone = (
        "tmp=$(mktemp -d /tmp/lib-XXXXXX); git clone --depth 1 https://github.com/other/lib.git"
        ' "$tmp" >/tmp/lib-clone.log 2>&1 && echo "$tmp"'
    )
    own = "git clone https://github.com/acme/api.git /tmp/api-copy"
    lines = [
        codex_line("session_meta", {"id": "c-1", "cwd": cwd}, 0),
        function_call("exec_command", {"cmd": clone, "workdir": cwd}, "a", 1),
        function_output("Process exited with code 0\nOutput:\n/tmp/lib-k3v9qz\n", "a", 2),
        function_call("exec_command", {"cmd": 'rg -n "sync:" /tmp/lib-k3v9qz'}, "b", 3),
        function_output("Process exited with code 0\nOutput:\nREADME.md:3:sync:", "b", 4),
        function_call("exec_command", {"cmd": "sed -n '40,75p' /tmp/lib-k3v9qz/README.md"}, "c", 5),
        function_output("Process exited with code 0\nOutput:\n...", "c", 6),
        function_call(
            "exec_command", {"cmd": "sed -n '1,20p' src/sync.ts", "workdir": cwd}, "d", 7
        ),
        function_output("Process exited with code 0\nOutput:\n...", "d", 8),
        function_call("exec_command", {"cmd": own, "workdir": cwd}, "e", 9),
        function_output("Process exited with code 0\nOutput:\n", "e", 10),
        function_call("exec_command", {"cmd": "cat /tmp/api-copy/README.md"}, "f", 11),
        function_output("Process exited with code 0\nOutput:\n...", "f", 12),
    ]
    transcript = codex.read(jsonl(tmp_path / "rollout-1.jsonl", lines))
    assert transcript is not None
    assert flagged(transcript) == {"a": [CLONE], "b": [CLONE], "c": [CLONE]}


def test_a_download_read_on_windows_jandedobbeleer_oh_my_posh_223b2708(tmp_path: Path) -> None:
    """JanDeDobbeleer__oh-my-posh 223b2708: on Windows, `curl -o` into a scratch folder the
    command `cd`s to, then Grep of it by its backslashed path and `sed -n` of it by name in
    Git Bash's; a drafted fix after those reads carries where the file came from."""
    cwd = "D:\\work\\api"
    scratch = "C:/Users/dev/AppData/Local/Temp/scratch"
    plugin = "https://raw.githubusercontent.com/other/plugin/master/plugin.zsh"
    windows = "C:\\Users\\dev\\AppData\\Local\\Temp\\scratch\\plugin.zsh"
    steps = [
        *call(1, "Bash", {"command": f'cd "$SCRATCH" 2>/dev/null || cd "{scratch}"; curl -sL'
                                     f" {plugin} -o plugin.zsh && wc -l plugin.zsh"}, "40", cwd),
        *call(2, "Grep", {"pattern": "zle", "path": windows, "output_mode": "content"}, "x", cwd),
        *call(3, "Bash", {"command": "cd /c/Users/dev/AppData/Local/Temp/scratch && sed -n"
                                     " '1,20p' plugin.zsh"}, "zle", cwd),
        *call(4, "Bash", {"command": f'cd "{scratch}" && cat notes.txt'}, "mine", cwd),
        *call(5, "Bash", {"command": "python3 check.py"}, MISSING, cwd, True),
        *call(6, "Write", {"file_path": "D:\\work\\api\\helper.py", "content": "x"}, "ok", cwd),
        *call(7, "Bash", {"command": "python3 check.py"}, "ok", cwd),
    ]  # fmt: skip
    transcript = claude(tmp_path, steps)
    assert flagged(transcript) == {"t1": [plugin], "t2": [plugin], "t3": [plugin]}
    [fix] = [d for d in drafts_of(transcript, None, REPO) if d.kind == "fix"]
    assert fix.sources == [plugin]


def following(outside: Outside) -> Callable[[str], list[str]]:
    """What each shell command read from outside, as the hooks see it (its fetch, then its
    run), `outside` kept across them."""

    def ran(command: str) -> list[str]:
        base = Event("start", "s", "codex", cwd="/home/dev/api")
        events = shell_call(base, command, "ok", 0)
        return list(dict.fromkeys(s for e in events for s in outside.read(e, REPO)))

    return ran


def test_an_archive_unpacked_from_a_package_fetched_to_look_at() -> None:
    """`npm pack NAME` fetches another's package (its tarball named by it), unpacked into a
    folder, then read; an archive unpacked into the session's own folder marks nothing (its
    names only the archive knows, and the repository is the user's)."""
    outside = Outside()
    ran = following(outside)

    assert ran("npm pack left-pad") == []  # a registry's tarball: no one's words yet
    assert ran("tar -xzf left-pad-1.3.0.tgz -C /tmp/left-pad") == []
    assert ran("cat /tmp/left-pad/package/README.md") == ["registry:npm pack left-pad"]
    assert ran("curl -sL https://example.com/x.tgz | tar -xz -C .") == ["https://example.com/x.tgz"]
    assert ran("cat src/app.py") == []
    # What a session remembers is bounded, the newest kept.
    for n in range(30):
        ran(f"git clone https://github.com/other/lib{n}.git /tmp/lib{n}")
    assert len(outside.paths) == 20 and outside.paths[-1][0] == "/tmp/lib29"
    assert ran("cat /tmp/lib29/README.md") == ["https://github.com/other/lib29.git"]
    assert ran("cat /tmp/left-pad/package/README.md") == []  # forgotten, the oldest


def test_what_a_session_remembers_of_outside_is_bounded_in_length() -> None:
    """A place past PATH_CHARS is remembered as its longest folder within it (a read under
    the place is still held), a source as the server keeps one, and the places past
    OUTSIDE_CHARS in all are forgotten, the oldest first; a state file is bounded again as
    it is read back."""
    outside = Outside()
    ran = following(outside)
    deep = "/tmp/lib/" + "/".join(["d" * 200] * 10)  # past PATH_CHARS
    long_url = "https://example.com/" + "x" * 2_000 + ".tgz"
    ran(f"curl -sL {long_url} -o {deep}/x.tgz")  # the fetch itself: its own source
    [(place, source)] = outside.paths
    assert len(place) <= PATH_CHARS and deep.startswith(place + "/")
    assert source == long_url[:SOURCE_CHARS]
    assert ran(f"cat {deep}/x.tgz") == [long_url[:SOURCE_CHARS]]
    for n in range(MAX_PATHS):
        ran(f"git clone https://github.com/other/lib{n}.git /tmp/{n:0>900}")
    kept = outside.paths
    assert sum(len(path) + len(source) for path, source in kept) <= OUTSIDE_CHARS
    assert len(kept) < MAX_PATHS and kept[-1][0] == f"/tmp/{MAX_PATHS - 1:0>900}"
    # What a state file holds past the bounds is bounded as it is read back.
    written = [[f"/tmp/{n}/" + "p" * 5_000, "https://e.com/" + "s" * 5_000] for n in range(50)]
    read_back = Outside(written, "https://e.com/" + "p" * 5_000)
    assert all(len(p) <= PATH_CHARS and len(s) <= SOURCE_CHARS for p, s in read_back.paths)
    assert len(read_back.page) == SOURCE_CHARS
    assert sum(len(p) + len(s) for p, s in read_back.paths) <= OUTSIDE_CHARS


def test_a_browsers_reads_of_the_page_it_opened_jandedobbeleer_oh_my_posh_6c0a282a(
    tmp_path: Path,
) -> None:
    """JanDeDobbeleer__oh-my-posh 6c0a282a: a browser tool opens another's site, then reads
    it by a script and by its text: each is a read of that site, though the call names no
    URL. The project's own site and the user's own dev server stay theirs (FSM1__cipher-box
    2095544c drives localhost), and resizing the window reads nothing."""
    cwd = "/home/dev/api"
    browser = "mcp__Claude_Browser__"
    script = {"action": "javascript_exec", "text": "document.title"}
    steps = [
        *call(1, f"{browser}navigate", {"url": "https://acmeapi.dev/docs"}, "ok", cwd),
        *call(2, f"{browser}get_page_text", {"max_chars": 300}, "our docs", cwd),
        *call(3, f"{browser}navigate", {"url": "https://other.io"}, "ok", cwd),
        *call(4, f"{browser}javascript_tool", script, "their title", cwd),
        *call(5, f"{browser}get_page_text", {"max_chars": 300}, "their words", cwd),
        *call(6, f"{browser}resize_window", {"width": 800, "height": 600}, "ok", cwd),
        *call(7, "mcp__playwright__browser_navigate", {"url": "http://localhost:5173"}, "ok", cwd),
        *call(8, "mcp__playwright__browser_snapshot", {}, "our app", cwd),
    ]
    assert flagged(claude(tmp_path, steps), "acme/acme-api") == {
        "t3": ["https://other.io"],
        "t4": ["https://other.io"],
        "t5": ["https://other.io"],
    }


def test_a_subagents_report_by_its_brief_jandedobbeleer_oh_my_posh_94fab1a1(
    tmp_path: Path,
) -> None:
    """JanDeDobbeleer__oh-my-posh 94fab1a1 and 6c0a282a: a background subagent briefed to
    fetch pages with WebFetch; its own calls are not in the transcript, its report is what
    the web said. A subagent sent to fix an issue whose URL its brief names reads nothing by
    its brief (223b2708), and one whose calls the transcript holds is read by its calls."""
    cwd = "/home/dev/api"
    launched = "Async agent launched successfully.\nagentId: a1b2c3 (internal ID)"
    web = {
        "description": "Palette research",
        "prompt": "Fetch the palette from https://palette.example.org/colors (WebFetch), then"
        " rework the theme file.",
        "run_in_background": True,
    }
    bare = {"description": "Survey sites", "prompt": "Use WebSearch and WebFetch on the"
            " sites of three similar tools and report their navigation."}  # fmt: skip
    fix = {
        "description": "Apply the fix",
        "prompt": "Fix https://github.com/acme/api/issues/12 in src/, then run the tests.",
    }
    seen = {"description": "Research", "prompt": "Use WebFetch on the docs."}
    search = {"query": "docs"}
    steps = [
        *call(1, "Agent", web, launched, cwd),
        *call(2, "Agent", bare, launched.replace("a1b2c3", "d4e5f6"), cwd),
        *call(3, "Agent", fix, "Fixed; the tests pass.", cwd),
        *sub_call(4, cwd, "t5", "WebSearch", search, "results"),
        *call(5, "Task", seen, "The docs say ...", cwd),
    ]
    assert flagged(claude(tmp_path, steps)) == {
        "t1": ["https://palette.example.org/colors"],
        "t2": ["subagent:Survey sites"],
        "s4": ["search:docs"],
    }


def hook_payload(tool: str, tool_input: dict[str, Any], cwd: str) -> dict[str, Any]:
    return {"session_id": "s", "cwd": cwd, "tool_name": tool, "tool_input": tool_input}


def test_every_client_reports_its_reads_searches_and_browsers_page() -> None:
    """The moments outside/ follows, in each client's own tool shapes: a search printing
    what files say (Claude Code's Grep in its content mode, Gemini CLI's grep_search), a
    browser opening a page or reading the one open (Cursor's, whose names carry no prefix),
    a Codex command in the folder it names."""
    claude = CLIENTS["claude-code"].events
    content = {"pattern": "x", "path": "/tmp/lib", "output_mode": "content"}
    [searched] = claude("post-tool-use", hook_payload("Grep", content, "/r"))
    assert (searched.kind, searched.path) == ("searched", "/tmp/lib")
    assert claude("post-tool-use", hook_payload("Grep", {"pattern": "x"}, "/r")) == []
    [grep] = CLIENTS["gemini"].events(
        "AfterTool", hook_payload("grep_search", {"pattern": "x", "dir_path": "/tmp/lib"}, "/r")
    )
    assert (grep.kind, grep.path) == ("searched", "/tmp/lib")
    cursor = CLIENTS["cursor"].events
    opened = cursor("afterMCPExecution", {"conversation_id": "c", "tool_name": "browser_navigate",
                                          "tool_input": {"url": "https://other.io"}})  # fmt: skip
    assert [(e.kind, e.sources, e.path) for e in opened] == [
        ("fetched", ("https://other.io",), ""),
        ("browsed", (), "https://other.io"),
    ]
    read = cursor("afterMCPExecution", {"conversation_id": "c", "tool_name": "browser_snapshot",
                                        "tool_input": {}})  # fmt: skip
    assert [(e.kind, e.path) for e in read] == [("browsed", "")]
    command = {"cmd": "cat README.md", "workdir": "/tmp/lib"}
    payload = {**hook_payload("exec_command", command, "/r"), "tool_response": "Exit code: 0"}
    ran = CLIENTS["codex"].events("PostToolUse", payload)
    assert [(e.kind, e.cwd) for e in ran] == [("ran", "/tmp/lib")]


SETUP = "https://example.com/setup.sh"


@pytest.mark.parametrize(
    ("landed", "read", "source"),
    [
        ("git clone git@github.com:other/lib.git /tmp/lib", "head -n 5 /tmp/lib/go.mod",
         "ssh://github.com/other/lib.git"),
        ("gh repo clone other/lib /tmp/lib -- --depth 1", "rg Serve /tmp/lib",
         "gh repo clone other/lib"),
        ("cd /tmp && wget https://example.com/lib.tar.gz", "tar -xzf /tmp/lib.tar.gz -C /tmp/lib"
         " && cat /tmp/lib/README", "https://example.com/lib.tar.gz"),
        (f"curl -fsSLo /tmp/lib/setup.sh {SETUP}", "cat /tmp/lib/setup.sh", SETUP),
        (f"curl -sL {SETUP} > /tmp/lib/setup.sh", "less /tmp/lib/setup.sh", SETUP),
        (f"iwr {SETUP} -OutFile C:\\tmp\\lib\\setup.ps1", "Get-Content C:/tmp/lib/setup.ps1",
         SETUP),
        ("pip download requests -d /tmp/lib", "unzip /tmp/lib/requests.whl -d /tmp/lib/x &&"
         " cat /tmp/lib/x/METADATA", "registry:pip download requests"),
    ],
)  # fmt: skip
def test_what_puts_an_outsiders_files_on_disk(landed: str, read: str, source: str) -> None:
    ran = following(Outside())
    ran(landed)
    assert ran(read) == [source]
    assert ran("cat /tmp/other/README src/app.py") == []


async def test_the_hooks_remember_what_came_from_outside_across_calls(
    served: str, db: asyncpg.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the hooks as Claude Code runs them, one process a call: a package fetched to
    look at (no one's words yet), unpacked, and read by a later call, is recorded with the
    session then; the session's state keeps where it landed, whole after every hook."""
    from agent_memory_client.hooks import run_hook
    from tests.helpers.git import checkout

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = checkout(tmp_path / "repo")

    def hook(event: str, **fields: Any) -> tuple[str, str]:
        payload = {"session_id": "c-1", "cwd": str(repo), "hook_event_name": event, **fields}
        return run_hook("claude-code", event, json.dumps(payload), served)

    def bash(command: str) -> dict[str, Any]:
        return {"tool_name": "Bash", "tool_input": {"command": command},
                "tool_response": {"stdout": "ok", "stderr": ""}}  # fmt: skip

    await asyncio.to_thread(hook, "session-start")
    await asyncio.to_thread(hook, "post-tool-use", **bash("npm pack left-pad"))
    await asyncio.to_thread(hook, "post-tool-use", **bash("tar -xzf left-pad-1.3.0.tgz -C /tmp/lp"))
    assert await db.fetchval("SELECT sources FROM sessions") == []
    state = load(Event("read", "c-1", "claude-code"))
    assert state is not None and [p for p, _ in state.outside.paths] == [
        f"{repo}/left-pad-*.tgz",
        "/tmp/lp",
    ]
    read = {"tool_name": "Read", "tool_input": {"file_path": "/tmp/lp/package/README.md"}}
    await asyncio.to_thread(hook, "post-tool-use", **read)
    assert await db.fetchval("SELECT sources FROM sessions") == ["registry:npm pack left-pad"]
    assert not list((tmp_path / "cache").rglob("*.tmp"))  # written whole, in place
