"""A client session's state between its hooks: one declared type, SessionState, read whole
by load() and written whole by save(), in one file a client session (state_file()).

Each hook is its own process: what the next hook of the same client session needs (the
memory session it opened, what it was handed, the fix tracker's failures, what came from
outside) waits here. A file another version wrote, or a broken one, is read as far as
it holds this type; one that holds no session is none, and the session starts fresh.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_memory_client.drafting import Tracker
from agent_memory_client.outside import Outside

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from agent_memory_client.drafting.tracker import FixState
    from agent_memory_client.loop.events import Event

MAX_HANDED = 500  # memory ids a session remembers it was handed (not handed again)
MAX_FILES_RECALLED = 200  # files a session remembers it recalled (once each)
MAX_SOURCES_SENT = 50  # untrusted sources a session remembers it reported (once each)
PENDING_CHARS = 4_000  # context waiting for a hook that can hand it over


class SessionState:
    """What a hook leaves for the next hook of the same client session. (A plain class, not
    a dataclass: a hook pays for every import, `dataclasses` dearly: docs/benchmarks.md,
    "What a hook's start costs".)"""

    __slots__ = (
        "answered",
        "capture_mode",
        "files",
        "fixes",
        "handed",
        "last_words",
        "outside",
        "pending",
        "reminded",
        "repo",
        "session_id",
        "sources",
        "top",
    )

    def __init__(
        self,
        session_id: str | None,  # the memory session; None: its turn ended, none reopened yet
        *,
        capture_mode: str = "",  # the server's: ask-first, silent, off
        repo: str | None = None,  # the repository, as git.py names it
        top: str | None = None,  # its top folder, which a file is named from
        handed: list[str] | None = None,  # memory ids handed (never again), the newest
        files: list[str] | None = None,  # files whose memories were recalled (once each)
        sources: list[str] | None = None,  # untrusted sources reported to the server
        outside: Outside | None = None,  # what came from outside (outside/)
        fixes: FixState | None = None,  # the fix tracker's (drafting/)
        reminded: bool = False,  # the capture reminder was given
        last_words: str | None = None,  # the agent's words at its last stop
        answered: bool = False,  # it answered in words no hook can read (Copilot CLI)
        pending: str = "",  # context waiting for a hook that can hand it over
    ) -> None:
        self.session_id, self.capture_mode, self.repo, self.top = (
            session_id,
            capture_mode,
            repo,
            top,
        )
        self.handed = handed if handed is not None else []
        self.files = files if files is not None else []
        self.sources = sources if sources is not None else []
        self.outside = outside if outside is not None else Outside()
        self.fixes = fixes
        self.reminded, self.last_words, self.answered = reminded, last_words, answered
        self.pending = pending

    def carried(self) -> SessionState:
        """What the client's session carries into its next memory session (a client with
        no session end of its own, whose turn ended one): what was handed stays handed,
        and the untrusted input it read is still in its context, so the new session is
        recorded as having read it too."""
        return SessionState(
            None, capture_mode=self.capture_mode, repo=self.repo, top=self.top,
            handed=self.handed, files=self.files, sources=self.sources, outside=self.outside,
        )  # fmt: skip

    def as_json(self) -> dict[str, object]:
        """The state as its file holds it: what is set, by the names every version read."""
        kept: dict[str, object] = {
            "session_id": self.session_id, "capture_mode": self.capture_mode, "repo": self.repo,
            "top": self.top, "handed": self.handed, "files": self.files, "sources": self.sources,
            **self.outside.state(), "fixes": self.fixes, "reminded": self.reminded,
            "last_words": self.last_words, "answered": self.answered, "pending": self.pending,
        }  # fmt: skip
        return {k: v for k, v in kept.items() if v or k == "session_id"}

    @classmethod
    def from_json(cls, data: object) -> SessionState | None:
        """The state a file holds, each field as far as it is of its type (a field of
        another type is left at its default); None where it holds no session."""
        if not isinstance(data, dict) or "session_id" not in data:
            return None
        session_id = data["session_id"]
        if session_id is not None and not isinstance(session_id, str):
            return None
        fixes = data.get("fixes")
        return cls(
            session_id,
            capture_mode=_text(data.get("capture_mode")) or "",
            repo=_text(data.get("repo")),
            top=_text(data.get("top")),
            handed=_texts(data.get("handed"))[-MAX_HANDED:],
            files=_texts(data.get("files"))[-MAX_FILES_RECALLED:],
            sources=_texts(data.get("sources"))[-MAX_SOURCES_SENT:],
            outside=Outside(data.get("outside"), data.get("page")),
            fixes=Tracker(fixes).state() if isinstance(fixes, dict) else None,
            reminded=data.get("reminded") is True,
            last_words=_text(data.get("last_words")),
            answered=data.get("answered") is True,
            pending=(_text(data.get("pending")) or "")[-PENDING_CHARS:],
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _texts(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def state_file(client_session: str) -> Path:
    """Where a hook leaves what the next hook of the same client session needs."""
    safe = "".join(c for c in client_session if c.isalnum() or c in "-_")[:100] or "unknown"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agent-memory" / "hook-sessions" / safe


def load(event: Event) -> SessionState | None:
    """The client session's state; None where it has none (or its file is unreadable)."""
    try:
        data = json.loads(state_file(event.session).read_text().strip())
    except (OSError, ValueError):
        return None
    return SessionState.from_json(data)


def save(event: Event, state: SessionState) -> None:
    """Written whole or not at all: a client may run hooks of one session at once (Gemini
    CLI does), and one must never read another's half-written state."""
    path = state_file(event.session)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(state.as_json()))
    os.replace(partial, path)


def forget(event: Event) -> None:
    """The client session ended: its state goes."""
    state_file(event.session).unlink(missing_ok=True)


def keep_for_later(event: Event, context: str) -> None:
    """Context the client's hook for this event cannot hand over, for the next that can."""
    state = load(event)
    if state is not None and context:
        state.pending = (state.pending + "\n\n" + context).strip()[-PENDING_CHARS:]
        save(event, state)


def take_pending(event: Event) -> str:
    """The context kept for this hook, once."""
    state = load(event)
    if state is None or not state.pending:
        return ""
    pending, state.pending = state.pending, ""
    save(event, state)
    return pending
