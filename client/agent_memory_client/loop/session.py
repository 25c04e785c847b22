"""A memory session's life, as the client's session goes: opened at its start (with the
snapshot and the capture guidance), opened again where a turn ended one (a client with no
session end of its own), the capture reminder once before the agent stops, and closed at
its end with the agent's last words."""

from __future__ import annotations

import os

from agent_memory_client.connection import Connection, Unavailable
from agent_memory_client.git import GitState, changed_files, git_state, head_of, history
from agent_memory_client.loop.events import TURN, Answer, Event
from agent_memory_client.loop.records import SOURCES_A_CALL
from agent_memory_client.loop.state import MAX_HANDED, SessionState, forget, load, save
from agent_memory_client.loop.transcript import SUMMARY_CHARS, assistant_turns, last_assistant_text
from agent_memory_client.loop.words import (
    CAPTURE_GUIDANCE,
    CAPTURE_REMINDER,
    drafts_note,
    usage_note,
)
from agent_memory_client.quoting import quoted

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any

SNAPSHOT_CHARS = 6_000


def _since_last_session(server: Connection, cwd: str, state: GitState) -> dict[str, Any]:
    """What changed in the repository since its last session started: the commits with
    their files when git can list them, else the changed files alone, else nothing."""
    if not state.repository or not state.commit:
        return {}
    last = server.call("GET", "/sessions", params={"source_repo": state.repository, "limit": 1})
    since = last[0].get("git_commit") if last else None
    if not since or since == state.commit:
        return {}
    commits = history(cwd, since, state.commit)
    if commits is not None:
        return {"history": commits} if commits else {}
    files = changed_files(cwd, since, state.commit)
    return {"changed_files": files} if files else {}


def start(event: Event, server: Connection) -> Answer:
    cwd = event.cwd or os.getcwd()
    git = git_state(cwd)
    repo = git.repository
    started = server.call(
        "POST",
        "/sessions",
        body={
            "agent": event.agent, "source_repo": repo, "git_branch": git.branch,
            "git_commit": git.commit, **_since_last_session(server, cwd, git),
        },
    )  # fmt: skip
    capture = started["capture"]
    shown = server.call(
        "GET",
        "/snapshot",
        params={"source_repo": repo, "max_chars": SNAPSHOT_CHARS, "format": "json"},
    )
    state = SessionState(
        started["session_id"], capture_mode=capture["capture_mode"], repo=repo, top=git.top,
        handed=shown["memory_ids"][:MAX_HANDED],
    )  # fmt: skip
    save(event, state)
    guidance = CAPTURE_GUIDANCE.get(capture["capture_mode"], "").format(
        budget=capture["silent_capture_budget"]
    )
    where = quoted(repo) if repo else "this workspace"
    context = f"# Long-term memory (agent-memory) for {where}\n\n{shown['markdown']}\n\n"
    context += usage_note(started.get("marked_stale", 0))
    if guidance:
        context += f" {guidance}"
    return Answer(context=context, done="memory loaded")


def end(event: Event, server: Connection) -> Answer:
    """A run in which the agent said nothing (killed before the model answered, or ended at
    once) is recorded as abandoned, which no snapshot shows; otherwise completed, with the
    agent's last words as its summary (none where its client said it answered but no hook
    could read the words: Copilot CLI's). One request."""
    state = load(event)
    if state is None:
        return Answer()
    said = (
        event.text.strip()[:SUMMARY_CHARS]
        or state.last_words
        or last_assistant_text(event.transcript)
    )
    if said:
        body = {"status": "completed", "summary": said}
    elif state.answered:
        body = {"status": "completed"}
    else:
        body = {
            "status": "abandoned",
            "summary": f"ended before the agent answered ({event.reason or 'other'})",
        }
    if state.session_id is None:  # ended at an earlier turn, not reopened since
        return Answer(done="session recorded")
    server.call("POST", f"/sessions/{state.session_id}/end", body=body)
    if event.reason == TURN:  # the client's session goes on: the next prompt reopens
        save(event, state.carried())
    else:
        forget(event)
    return Answer(done="session recorded")


def reopened(event: Event, server: Connection, state: SessionState) -> SessionState:
    """A memory session again for a client session whose last turn ended one (a client
    with no session end of its own): what was handed stays handed, no snapshot again."""
    if state.session_id is not None:
        return state
    commit, branch = head_of(event.cwd or os.getcwd())  # the repository is the state's
    started = server.call(
        "POST",
        "/sessions",
        body={
            "agent": event.agent, "source_repo": state.repo, "git_branch": branch,
            "git_commit": commit,
        },
    )  # fmt: skip
    state.session_id, state.reminded = started["session_id"], False
    state.capture_mode = started["capture"]["capture_mode"]
    if state.sources:
        body = {"sources": state.sources[-SOURCES_A_CALL:]}
        server.call("POST", f"/sessions/{started['session_id']}/sources", body=body)
    save(event, state)
    return state


def stop(event: Event, server: Connection) -> Answer:
    """Once a session, when the agent is about to stop after doing something, remind it to
    capture what it learned, with the session's drafts (in the configured capture mode;
    never with `off`, never twice, never while a Stop hook already holds it). Every stop
    keeps the turn's last words for the session's end (a client's transcript may not hold
    them yet when the hook runs)."""
    state = load(event)
    if state is None or state.session_id is None:
        return Answer(done="nothing to remind")
    said = event.text.strip()[:SUMMARY_CHARS] or None
    if said is not None and said != state.last_words:
        state.last_words = said
        save(event, state)
    elif said is None and event.did_something and not state.answered:
        state.answered = True  # in words no hook can read (Copilot CLI)
        save(event, state)
    if state.reminded or event.continuing:
        return Answer(done="nothing to remind")
    reminder = CAPTURE_REMINDER.get(state.capture_mode)
    acted = said or event.did_something or assistant_turns(event.transcript)
    if reminder is None or not acted:
        return Answer(done="nothing to remind")
    try:
        held = server.call("GET", f"/sessions/{state.session_id}/drafts")
    except Unavailable:
        held = {"drafts": []}  # the reminder without them
    state.reminded = True
    save(event, state)
    note = drafts_note(held["drafts"], untrusted=bool(held.get("sources")))
    return Answer(reminder=reminder + note, done="capture reminder")
