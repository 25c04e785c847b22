"""What the loop records with the memory session besides recall: a fix's draft when a command
passes that ends a failure the session waits on, and the untrusted sources a call brought
in (or read again, from what came from outside earlier: outside/)."""

from __future__ import annotations

from agent_memory_client.drafting import Tracker
from agent_memory_client.loop.events import Answer, Event
from agent_memory_client.loop.state import MAX_SOURCES_SENT, load, save

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from agent_memory_client.connection import Connection

SOURCES_A_CALL = 20  # what the server takes in one call (POST /sessions/{id}/sources)


def ran(event: Event, server: Connection) -> Answer:
    """A command passed: when it ends a failure the session waits on, the fix tracker's
    draft of what was learned (drafting/), sent to the service, which screens it and
    keeps it beside the session (never as a memory)."""
    state = load(event)
    waiting = state.fixes.get("open") if state and state.fixes else None
    if state is None or state.session_id is None or not waiting:
        return Answer(done="noted")
    tracker = Tracker(state.fixes)
    draft = tracker.ran(event.command)
    if (fixes := tracker.state()) != state.fixes:
        state.fixes = fixes
        save(event, state)
    if draft is None:
        return Answer(done="noted")
    body = {  # the service screens it
        "text": draft["text"], "files": draft["files"], "evidence": draft["evidence"],
        "key": draft["key"],
    }  # fmt: skip
    server.call("POST", f"/sessions/{state.session_id}/drafts", body=body)
    return Answer(done="draft kept")


def fetched(event: Event, server: Connection) -> Answer:
    """A call that may bring untrusted input into the session (a fetch, a read of what came
    from outside before: outside/): its sources recorded with the session (each once), so
    that what the session writes while open waits for a person. Where it put an outsider's
    files, or the page it opened, is kept first, so that a failed record loses no later
    read of them."""
    state = load(event)
    if state is None or state.session_id is None:
        return Answer(done="noted")
    before = state.outside.state()
    read = state.outside.read(event, state.repo)  # its own site is its own
    if state.outside.state() != before:
        save(event, state)
    new = [s for s in read if s and s not in state.sources]
    if not new:
        return Answer(done="noted")
    server.call(
        "POST", f"/sessions/{state.session_id}/sources", body={"sources": new[:SOURCES_A_CALL]}
    )
    state.sources = (state.sources + new)[-MAX_SOURCES_SENT:]
    save(event, state)
    return Answer(done="untrusted input noted")
