"""The fix tracker: a session's failures awaiting their fix and the files it has been
writing, fed the session's moments in order. Its state is plain JSON (FixState): the hooks
keep it in the session's state between processes (loop/state.py)."""

from __future__ import annotations

import os
import re

from agent_memory_client.drafting.commands import COMMITS, doing, hook_tool, named_in, tracked
from agent_memory_client.drafting.lesson import (
    DRAFT_COMMAND_CHARS,
    DRAFT_ERROR_CHARS,
    DRAFT_FILES,
    lesson_of,
)
from agent_memory_client.shell import error_lines, keys, last_lines, shown

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any, TypedDict

    class Edit(TypedDict):
        path: str
        change: str
        anchor: str
        own: bool  # a file the session had written before the failure

    class Run(TypedDict):
        command: str
        anchor: str

    class Failure(TypedDict):
        command: str
        keys: list[str]
        error: str
        tail: str
        anchors: list[str]
        edits: list[Edit]
        runs: list[Run]
        hook: str | None
        before: list[str]

    from agent_memory_client.drafting.lesson import Draft

    class FixState(TypedDict):
        open: list[Failure]
        touched: list[str]


CHANGE_CHARS = 400  # of an edit's change, what a draft shows (each client's adapter cuts it)
OPEN_FAILURES = 4  # failures a session waits on at once (the newest)
RUNS_KEPT = 4  # commands run between a failure and its pass, remembered for the draft
TOUCHED_KEPT = 300  # files a session has edited, remembered


def error_query(output: str) -> str:
    """What of a failed command's output stands for it in a recall: its error lines, else
    its last lines."""
    return error_lines(output) or last_lines(output)


class Tracker:
    """A session's failures awaiting their fix, and the files it has been writing. Given a
    state (state()'s, kept between hooks) it works on its own copy: the caller sees what
    changed by comparing the two."""

    def __init__(self, state: FixState | dict[str, Any] | None = None) -> None:
        given: dict[str, Any] = dict(state) if isinstance(state, dict) else {}
        opened = given.get("open")
        self.open: list[Failure] = [
            failure
            for failure in map(_failure, opened if isinstance(opened, list) else [])
            if failure is not None
        ]
        touched = given.get("touched")
        self.touched: list[str] = _texts(touched)
        # Every failure a pass ended, lesson or not (the history import's candidates for a
        # person's own agent to judge, history/distill.py); not kept between hooks.
        self.ended: list[tuple[Failure, str, str]] = []

    def state(self) -> FixState:
        return {"open": self.open, "touched": self.touched[-TOUCHED_KEPT:]}

    def failed(self, command: str, output: str, anchor: str = "") -> None:
        """A command failed: it waits for its fix (a failure of the same work again keeps
        the first's error and anchor, and notes this one's)."""
        wanted = keys(command)
        if not wanted or not tracked(command):
            return
        for waiting in self.open:
            if waiting["keys"] == list(wanted):
                waiting["anchors"] = [*waiting["anchors"], anchor][-RUNS_KEPT:]
                waiting["command"] = shown(command)[:DRAFT_COMMAND_CHARS]
                return
        error = error_lines(output)
        failure: Failure = {
            "command": shown(command)[:DRAFT_COMMAND_CHARS],
            "keys": list(wanted),
            "error": error,
            "tail": "" if error else last_lines(output, 3, DRAFT_ERROR_CHARS),
            "anchors": [anchor],
            "edits": [],
            "runs": [],
            "hook": hook_tool(output) if COMMITS & set(wanted) else None,
            "before": [p for p in self.touched if named_in(p, output)][:DRAFT_FILES],
        }
        self.open = [*self.open, failure][-OPEN_FAILURES:]

    def edited(self, path: str, change: str = "", anchor: str = "") -> None:
        """A file changed: noted for each failure that waits, and as the session's own."""
        if not path:
            return
        for failure in self.open:
            new = not any(e["path"] == path for e in failure["edits"])
            if new and len(failure["edits"]) < DRAFT_FILES:
                # `own`: a file the session had written before (the code it is writing)
                own = path in self.touched
                failure["edits"].append(
                    {"path": path, "change": change[:CHANGE_CHARS], "anchor": anchor,
                     "own": own}
                )  # fmt: skip
        if path not in self.touched:
            self.touched.append(path)

    def ran(self, command: str, anchor: str = "") -> Draft | None:
        """A command passed: the draft of the failure it ends, if that is a lesson; or a
        step noted for the failures that wait."""
        done = set(keys(command))
        for failure in self.open:
            if set(failure["keys"]) <= done:  # the same work (shell.same_work), by its keys
                self.open = [f for f in self.open if f is not failure]
                self.ended.append((failure, shown(command), anchor))
                return lesson_of(failure, shown(command), anchor)
        if doing(command):
            step: Run = {"command": shown(command)[:DRAFT_COMMAND_CHARS], "anchor": anchor}
            for failure in self.open:
                failure["runs"] = [*failure["runs"], step][-RUNS_KEPT:]
        return None


def _failure(value: object) -> Failure | None:
    """A failure as a state file holds it, copied (the tracker changes its own), or None
    for one that is not one (a file of another version, or broken)."""
    if not isinstance(value, dict):
        return None
    if not all(isinstance(value.get(name), str) for name in ("command", "error", "tail")):
        return None
    edits: list[Edit] = [
        {
            "path": e["path"],
            "change": e["change"],
            "anchor": str(e.get("anchor") or ""),
            "own": bool(e.get("own")),
        }
        for e in value.get("edits") or []
        if isinstance(e, dict)
        and isinstance(e.get("path"), str)
        and isinstance(e.get("change"), str)
    ]
    runs: list[Run] = [
        {"command": r["command"], "anchor": str(r.get("anchor") or "")}
        for r in value.get("runs") or []
        if isinstance(r, dict) and isinstance(r.get("command"), str)
    ]
    hook = value.get("hook")
    return {
        "command": value["command"],
        "keys": _texts(value.get("keys")),
        "error": value["error"],
        "tail": value["tail"],
        "anchors": _texts(value.get("anchors")),
        "edits": edits,
        "runs": runs,
        "hook": hook if isinstance(hook, str) else None,
        "before": _texts(value.get("before")),
    }


def _texts(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def relative_path(path: str, cwd: str, top: str | None) -> str | None:
    """A file as the repository names it (relative to its top folder, else the session's
    folder); None for one outside it."""
    if not path:
        return None
    windows = "\\" in path or "\\" in cwd
    sep_path = path.replace("\\", "/") if windows else path
    sep_cwd = cwd.replace("\\", "/") if windows else cwd
    absolute = sep_path.startswith("/") or bool(re.match(r"^[A-Za-z]:/", sep_path))
    full = os.path.normpath(
        sep_path if absolute or not sep_cwd else os.path.join(sep_cwd, sep_path)
    )
    base = (top or sep_cwd).replace("\\", "/") if (top or sep_cwd) else ""
    if not base:
        return sep_path
    if windows:
        full = full.replace("\\", "/")
        if full.lower().startswith(base.lower().rstrip("/") + "/"):
            return full[len(base.rstrip("/")) + 1 :]
        return None
    found = os.path.relpath(full, base)
    return None if found.startswith("..") else found
