"""What every adapter is, and the few readings of hook input that several clients share."""

from __future__ import annotations

from agent_memory_client.drafting import CHANGE_CHARS
from agent_memory_client.loop import Answer, Event
from agent_memory_client.provenance import browser_page, command_sources, tool_sources
from agent_memory_client.shell import cancelled, failed, kept

TYPE_CHECKING = False  # typing's import is a hook's cost (loop.py): types for mypy alone
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


def replaced(old: object, new: object) -> str:
    """An edit's change as a short diff reads: the old lines, then the new ones (nothing
    unless both are text: a file written whole)."""
    if not (isinstance(old, str) and isinstance(new, str)):
        return ""
    lines = [f"- {line}" for line in old.strip().splitlines()]
    lines += [f"+ {line}" for line in new.strip().splitlines()]
    return "\n".join(lines)[:CHANGE_CHARS]


def change_of(tool_input: dict[str, Any]) -> str:
    """An edit's change as a person reads a short diff: what was replaced by what (nothing
    for a file written whole), of one `old_string`/`new_string` pair or a list of `edits`
    (Claude Code's MultiEdit, Cursor's afterFileEdit)."""
    edits = tool_input.get("edits")
    pairs = edits if isinstance(edits, list) else [tool_input]
    pairs = [p for p in pairs if isinstance(p, dict)]
    shown = (replaced(p.get("old_string"), p.get("new_string")) for p in pairs)
    return "\n".join(s for s in shown if s)[:CHANGE_CHARS]


class HookSpec:
    """One hook as the client's configuration declares it: its event, the tools it fires
    for (a matcher; None: every time), and the deadline the client enforces."""

    __slots__ = ("argument", "event", "matcher", "timeout_s")

    def __init__(
        self, event: str, matcher: str | None = None, argument: str = "", timeout_s: int = 5
    ) -> None:
        self.event, self.matcher, self.timeout_s = event, matcher, timeout_s
        self.argument = argument  # what `hook` is given (default: the event's name)

    @property
    def hook(self) -> str:
        return self.argument or self.event


class Adapter:
    """A client: its name, the hooks its configuration declares, how its input reads as
    the loop's events (none: nothing for memory to do), how an answer is written in its
    output shape (None: print nothing), and which of its hooks hand context to the model
    (what the others recall waits for one of these)."""

    __slots__ = ("context_hooks", "events", "hooks", "name", "render")

    def __init__(
        self,
        *,
        name: str,  # as `hook --client NAME` and `install NAME` spell it
        hooks: tuple[HookSpec, ...],
        events: Callable[[str, dict[str, Any]], Sequence[Event]],
        render: Callable[[str, Answer], dict[str, Any] | None],
        context_hooks: frozenset[str],
    ) -> None:
        self.name, self.hooks = name, hooks
        self.events, self.render, self.context_hooks = events, render, context_hooks


def tool_input_of(payload: dict[str, Any]) -> dict[str, Any]:
    found = payload.get("tool_input")
    return found if isinstance(found, dict) else {}


def session_of(payload: dict[str, Any], agent: str) -> Event:
    """The session and the place of a hook whose input names them as Claude Code's does
    (`session_id`, `cwd`, `transcript_path`), which Codex and Gemini CLI follow."""
    return Event(
        "start",
        session=str(payload.get("session_id") or ""),
        agent=agent,
        cwd=text_of(payload.get("cwd")),
        transcript=text_of(payload.get("transcript_path")) or None,
    )


def at(base: Event, kind: str, **fields: Any) -> Event:
    """The client's session and place (`base`) at one moment of the loop."""
    return base.at(kind, **fields)


def fetched(base: Event, sources: Sequence[str], command: str = "") -> list[Event]:
    """The moment a tool brought untrusted input in (provenance.py's rule), if it did;
    `command`: the shell command that fetched it (outside.py reads where it put it)."""
    return [at(base, "fetched", sources=tuple(sources), command=command)] if sources else []


def tool_call(
    base: Event, tool: str, tool_input: dict[str, Any], server: str = "", mcp: bool = False
) -> list[Event]:
    """A call of a tool that is not the shell, an edit or a file's read (a web tool, another
    MCP server's), as the loop reads it, for every client's hooks and the history import
    alike: what it fetched from outside; and a browser's, what it did to the page (browsed:
    the URL it opened, or "" for a read of the page open, which outside.py follows).
    tool_sources()'s arguments."""
    page = browser_page(tool, tool_input, server, mcp)
    browsed = [at(base, "browsed", path=page)] if page is not None else []
    return [*fetched(base, tool_sources(tool, tool_input, server, mcp)), *browsed]


def shell_call(base: Event, command: str, output: str, code: int | None) -> list[Event]:
    """A shell call as the loop reads it, for every client's hooks and the history import
    alike: what it fetched from others, recorded first (it holds whatever follows); then
    nothing more when the client cancelled it (no failure, and no pass); else `failed` as
    the shell saw it (its status; where a pipe hid it or none is known, what its output
    shows) or `ran`, with the output as it is read (shell.kept(): bounded)."""
    found = fetched(base, command_sources(command), command)
    return [*found, *shell_outcome(base, command, output, code)]


def shell_outcome(base: Event, command: str, output: str, code: int | None) -> list[Event]:
    """shell_call() without what it fetched (for a reader that recorded that already)."""
    if cancelled(output):
        return []
    shown = kept(output)
    return [at(base, "failed" if failed(command, shown, code) else "ran", command=command,
               text=shown)]  # fmt: skip


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def claude_shaped(event_name: str, answer: Answer, decision: str) -> dict[str, Any] | None:
    """Claude Code's output, which Codex and Gemini CLI read too: the reminder as a
    decision (its word is the client's) with its reason, or the context beside the event's
    name."""
    if answer.reminder:
        return {"decision": decision, "reason": answer.reminder}
    if not answer.context:
        return None
    return {
        "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": answer.context}
    }
