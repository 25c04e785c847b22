"""What the loop hands the agent during a session: the few memories that bear on a prompt,
on a failed command's error, or on a file it opens or edits, gated and budgeted by the
server, never one already handed. A failure and an edit are also the fix tracker's
(drafting/), kept in the session's state for the command that passes (records.py)."""

from __future__ import annotations

from agent_memory_client.drafting import Tracker, error_query, relative_path
from agent_memory_client.git import repository_name
from agent_memory_client.loop.events import Answer, Event
from agent_memory_client.loop.session import reopened
from agent_memory_client.loop.state import MAX_FILES_RECALLED, MAX_HANDED, SessionState, load, save

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any

    from agent_memory_client.connection import Connection

PROMPT_CHARS = 1_000  # what a recall reads of a prompt
FILE_RECALL_TOKENS = 200  # a file's memories: less than a prompt's (RECALL_MAX_TOKENS)


def _recall(
    event: Event, server: Connection, q: str, purpose: str, state: SessionState | None = None
) -> Answer:
    """The memories that bear on `q` and that this session was not yet handed, as context;
    nothing when none clears the server's gate."""
    state = state if state is not None else load(event)
    # A client may fire its prompt hook while the start's is still running (Gemini CLI
    # does): the repository is then asked of git here.
    repo = state.repo if state else repository_name(event.cwd) if event.cwd else None
    # No repository known: a recall would read every repository's memories; none, then.
    if not q.strip() or not repo:
        return Answer(done="nothing to recall")
    handed = list(state.handed) if state else []
    body: dict[str, Any] = {"q": q, "source_repo": repo, "purpose": purpose, "exclude": handed}
    if state and state.session_id:  # what it wrote and is held, it is still handed
        body["session_id"] = state.session_id
    if purpose == "file":
        body["max_tokens"] = FILE_RECALL_TOKENS
    recalled = server.call("POST", "/recall", body=body)
    if not recalled["text"]:
        return Answer(done="nothing to recall")
    if state is not None:
        state.handed = (handed + recalled["ids"])[-MAX_HANDED:]
        save(event, state)
    return Answer(context=recalled["text"], done="memories recalled")


def prompt(event: Event, server: Connection) -> Answer:
    """Recall on the prompt: the few memories of this repository (and globals) it bears on."""
    state = load(event)
    if state is not None:
        state = reopened(event, server, state)
    return _recall(event, server, event.text[:PROMPT_CHARS], "prompt", state)


def failed(event: Event, server: Connection) -> Answer:
    """Recall on failure: a failed command's error against the error patterns. The failure
    waits in the session's fix tracker (drafting/) for the same work to pass."""
    query = error_query(event.text)
    state = load(event)
    if state is not None:
        tracker = Tracker(state.fixes)
        tracker.failed(event.command, event.text)
        if (fixes := tracker.state()) != state.fixes:
            state.fixes = fixes
            save(event, state)
    return _recall(event, server, query, "failure", state)


def in_repository(state: SessionState, event: Event) -> str | None:
    """The event's file as the repository names it (relative to its top level), or None
    for a file outside it."""
    return relative_path(event.path, event.cwd, state.top or None)


def read(event: Event, server: Connection) -> Answer:
    """A file opened: its memories, once a session."""
    state = load(event)
    path = in_repository(state, event) if state else None
    if state is None or path is None:
        return Answer(done="nothing to recall")
    return _file_recall(event, server, state, path)


def _file_recall(
    event: Event, server: Connection, state: SessionState, path: str, changed: bool = False
) -> Answer:
    """A file's memories, once a session; the state saved once (`changed`: it was already)."""
    if path in state.files:
        if changed:
            save(event, state)
        return Answer(done="nothing to recall")
    state.files = [*state.files, path][-MAX_FILES_RECALLED:]
    save(event, state)
    return _recall(event, server, path, "file", state)


def edited(event: Event, server: Connection) -> Answer:
    """A file changed: noted in the fix tracker, and its memories, once."""
    state = load(event)
    path = in_repository(state, event) if state else None
    if state is None or path is None:
        return Answer(done="noted")
    tracker = Tracker(state.fixes)
    tracker.edited(path, event.change)
    fixes = tracker.state()
    changed = fixes != state.fixes
    state.fixes = fixes
    return _file_recall(event, server, state, path, changed)
