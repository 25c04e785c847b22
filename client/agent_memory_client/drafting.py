"""The rule a draft is made by, once for the live hooks (loop.py) and for past sessions
(history/): a command fails; the agent changes files; the same command passes. The draft
says what failed, with its error's last line, and what change made it pass. A retry that
passes with nothing changed, or a formatter's or linter's run, drafts nothing.

Failures are plain dicts: the hooks keep one in a session's state file between processes."""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any

# Drafts: few (the service keeps a session's newest three), short.
DRAFT_FILES, DRAFT_COMMAND_CHARS, DRAFT_ERROR_CHARS = 5, 200, 200
# Formatters and linters: what a change fixed there is rarely a lesson for a later session.
NO_LESSON = frozenset({"ruff", "black", "isort", "prettier", "eslint", "gofmt", "rustfmt"})
ERROR_LINES, ERROR_CHARS = 5, 600  # ... of a failed command's error: its last lines
ERROR_TAIL_CHARS = 16_384  # what of the output is read for them


# A terminal's escape sequences (colours, cursor moves, titles) and other control
# characters: a coloured test run's output is full of them, and the server refuses text
# that holds them (no hidden characters reach an agent).
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """The text as a person reads it on a terminal: escape sequences and control
    characters out (line breaks and tabs stay)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def error_query(error: str) -> str:
    """What of a failed command's output stands for it: its last lines, where the error
    itself is (a traceback's last line, a linker's summary), as plain text."""
    # Its tail only: a hook runs on every failure, and a test run's output may be megabytes.
    lines = [line.strip() for line in plain(error[-ERROR_TAIL_CHARS:]).splitlines() if line.strip()]
    return "\n".join(lines[-ERROR_LINES:])[-ERROR_CHARS:]


def failure_of(command: str, error: str) -> dict[str, Any]:
    return {"command": command[:DRAFT_COMMAND_CHARS], "error": error_query(error), "changed": []}


def with_change(failure: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The failure with one more changed file; None when it names that file already or
    holds as many as a draft names."""
    if path in failure["changed"] or len(failure["changed"]) >= DRAFT_FILES:
        return None
    return {**failure, "changed": [*failure["changed"], path]}


def same_task(failed: str, passed: str) -> bool:
    """The command that passed is the one that failed, run again (its program and first
    argument: `pytest tests/x.py` and `pytest tests/x.py -q`)."""

    def head(command: str) -> list[str]:
        return [w for w in command.split() if not w.startswith("-")][:2]

    return bool(head(failed)) and head(failed) == head(passed)


def after_pass(failure: dict[str, Any], command: str) -> tuple[bool, dict[str, Any] | None]:
    """A command passed while `failure` was noted: whether it ends the failure (the same
    command), and the draft it makes (None for a pass with nothing changed, or a
    formatter's)."""
    if not same_task(failure["command"], command):
        return False, None
    words = command.split()
    program = os.path.basename(words[0]) if words else ""
    if not failure["changed"] or program in NO_LESSON:
        return True, None
    return True, draft_of(failure)


def draft_of(failure: dict[str, Any]) -> dict[str, Any]:
    last_line = failure["error"].splitlines()[-1] if failure["error"] else "an error"
    files = ", ".join(failure["changed"])
    text = (
        f"`{failure['command']}` failed with: {last_line[:DRAFT_ERROR_CHARS]}. It passed after"
        f" changing {files}."
    )
    return {"text": text, "files": failure["changed"]}
