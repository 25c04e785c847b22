"""The loop's words: the moments of an agent's session it acts on (Event, one of KINDS),
and what it hands back (Answer). Each client's adapter (clients/) turns its hook input into
events and answers into its output."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any

# idle: a moment with nothing of its own, where context that waits can be handed over;
# searched: a tool printed what files under a path say; browsed: a browser opened a page
# (`path`, its URL) or read the page open (no `path`).
KINDS = (
    "start", "prompt", "failed", "ran", "read", "edited", "fetched", "searched", "browsed",
    "stop", "end", "idle",
)  # fmt: skip
# Moments that may read what came from outside earlier in the session (outside/).
READS_OUTSIDE = ("read", "ran", "failed")
# An end's reason for a turn that ends where the client has no session end (Codex): the
# memory session is recorded, and the next prompt opens another, keeping these.
TURN = "turn"


class Event:
    """One moment of a client's session, as the loop needs it. (Plain classes here, not
    dataclasses: a hook pays for every import, `dataclasses` dearly: docs/benchmarks.md,
    "What a hook's start costs".)"""

    __slots__ = (
        "agent",
        "change",
        "command",
        "continuing",
        "cwd",
        "did_something",
        "kind",
        "path",
        "reason",
        "session",
        "sources",
        "text",
        "transcript",
    )  # fmt: skip

    def __init__(
        self,
        kind: str,  # one of KINDS
        session: str,  # the client's own session id: where the hooks keep their state
        agent: str,  # the client, as the session records it (claude-code, codex, ...)
        *,
        cwd: str = "",
        text: str = "",  # the prompt; a failure's error; the turn's last words
        command: str = "",  # a shell command (failed, ran)
        path: str = "",  # a file (read, edited), as the client gives it
        transcript: str | None = None,  # the session's transcript, where the client keeps one
        reason: str = "",  # why the session ended
        continuing: bool = False,  # stop: the agent already goes on, a Stop hook said so
        did_something: bool = False,  # stop: the client says the turn did something
        sources: tuple[str, ...] = (),  # fetched: what the tool read (provenance.py)
        change: str = "",  # edited: the change itself, where the client says (a diff's text)
    ) -> None:
        self.kind, self.session, self.agent, self.cwd = kind, session, agent, cwd
        self.sources, self.change = sources, change
        self.text, self.command, self.path, self.transcript = text, command, path, transcript
        self.reason, self.continuing, self.did_something = reason, continuing, did_something

    def at(self, kind: str, **changes: Any) -> Event:
        """The same session and place at another moment."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        return Event(**{**fields, "kind": kind, **changes})


class Answer:
    """What the loop hands back: context for the model, and/or a reason to go on (the
    capture reminder, which the client sends as the agent's next instruction)."""

    __slots__ = ("context", "done", "reminder")

    def __init__(self, context: str = "", reminder: str = "", done: str = "") -> None:
        self.context, self.reminder = context, reminder
        self.done = done  # one line for the hook's stderr
