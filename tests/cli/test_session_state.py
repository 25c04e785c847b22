"""A client session's state between its hooks (client/agent_memory_client/loop/state.py):
one declared type, read whole and written whole; a file of another version or a broken one
is read as far as it holds the type, or starts the session fresh. And one fix tracker
(drafting/) for the live hooks, each its own process, and for the history import's replay:
the same moments draft the same lesson."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from agent_memory_client.connection import Connection
from agent_memory_client.drafting import Tracker
from agent_memory_client.loop import Event, handle
from agent_memory_client.loop.state import SessionState, load, save, state_file
from agent_memory_client.outside import Outside

SESSION = "c-1"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def at(kind: str, **fields: Any) -> Event:
    return Event(kind, SESSION, "claude-code", cwd="/home/dev/api", **fields)


def written(text: str | bytes) -> None:
    state_file(SESSION).parent.mkdir(parents=True, exist_ok=True)
    state_file(SESSION).write_bytes(text if isinstance(text, bytes) else text.encode())


def test_the_state_is_written_whole_and_read_back_as_it_was() -> None:
    outside = Outside([["/tmp/lib", "https://github.com/other/lib.git"]], "https://e.com/a")
    tracker = Tracker()
    tracker.failed("pytest -q", "E   ModuleNotFoundError: No module named 'x'")
    state = SessionState(
        "m1", capture_mode="silent", repo="acme/api", top="/home/dev/api", handed=["a", "b"],
        files=["app/x.py"], sources=["https://e.com/a"], outside=outside, fixes=tracker.state(),
        reminded=True, last_words="Done.", answered=True, pending="context",
    )  # fmt: skip
    save(at("stop"), state)
    again = load(at("stop"))
    assert again is not None and again.as_json() == state.as_json()
    assert again.outside.paths == [("/tmp/lib", "https://github.com/other/lib.git")]
    assert not list(state_file(SESSION).parent.glob("*.tmp"))  # renamed into place
    # What a turn's end carries into the next memory session, and what it leaves.
    carried = state.carried().as_json()
    assert carried == {
        "session_id": None, "capture_mode": "silent", "repo": "acme/api",
        "top": "/home/dev/api", "handed": ["a", "b"], "files": ["app/x.py"],
        "sources": ["https://e.com/a"], "outside": [["/tmp/lib", "https://github.com/other/lib.git"]],
        "page": "https://e.com/a",
    }  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[]", '"m1"', '{"capture_mode": "silent"}', '{"session_id": 7}', b"\xff{"],
)
def test_a_file_that_holds_no_session_starts_the_session_fresh(text: str | bytes) -> None:
    written(text)
    assert load(at("prompt")) is None


def test_a_file_of_another_version_is_read_as_far_as_it_holds_the_type() -> None:
    """The state the previous version wrote (a plain dict of the same names) reads back;
    a field of another type is left at its default, a broken failure dropped."""
    failure = {
        "command": "npm run build", "keys": ["npm run build"], "error": "Error: x", "tail": "",
        "anchors": [""], "edits": [{"path": "package.json", "change": "", "anchor": ""}],
        "runs": [], "hook": None, "before": [],
    }  # fmt: skip
    written(
        json.dumps(
            {
                "session_id": "m1", "capture_mode": "ask-first", "repo": "acme/api", "top": 3,
                "handed": "ab", "files": ["app/x.py", 4], "reminded": "yes",
                "fixes": {"open": [failure, {"command": 1}], "touched": ["package.json"]},
                "outside": [["/tmp/lib", "https://x.org/lib"], "junk"], "page": None,
                "an_old_key": True,
            }
        )
    )  # fmt: skip
    state = load(at("prompt"))
    assert state is not None
    assert (state.session_id, state.capture_mode, state.repo) == ("m1", "ask-first", "acme/api")
    assert (state.top, state.handed, state.files, state.reminded) == (None, [], ["app/x.py"], False)
    assert state.fixes is not None and [f["command"] for f in state.fixes["open"]] == [
        "npm run build"
    ]
    assert state.fixes["open"][0]["edits"][0]["own"] is False
    assert state.outside.paths == [("/tmp/lib", "https://x.org/lib")] and state.outside.page == ""


class Server:
    """The server as the hooks call it: each call kept, answered as a quiet server does."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    def call(self, method: str, path: str, **given: Any) -> Any:
        self.calls.append((method, path, given.get("body")))
        return {"text": "", "ids": []} if path == "/recall" else {}


MISSING = "Error: Cannot find module 'esbuild'\n    at Module._resolveFilename"
MOMENTS = [
    at("failed", command="npm run build", text=MISSING),
    at("ran", command="npm install"),  # the fix: run between the failure and its pass
    at("ran", command="npm run build"),
]


def test_the_live_hooks_and_the_replay_draft_the_same_fix() -> None:
    """Each hook loads the tracker's state and saves what changed: a command run between a
    failure and its pass is kept across hooks (it was lost when the tracker changed the
    loaded failure in place and the hook saw nothing to save)."""
    save(
        at("start"), SessionState("m1", capture_mode="silent", repo="acme/api", top="/home/dev/api")
    )
    server = Server()
    for moment in MOMENTS:
        handle(moment, cast(Connection, server))
    [draft] = [body for method, path, body in server.calls if path == "/sessions/m1/drafts"]
    replay = Tracker()
    replay.failed(MOMENTS[0].command, MOMENTS[0].text)
    assert replay.ran(MOMENTS[1].command) is None
    replayed = replay.ran(MOMENTS[2].command)
    assert replayed is not None and draft["text"] == replayed["text"]
    assert "running `npm install`" in draft["text"]
