"""The memory loop, once for every client: what happens at each moment of an agent's
session, over normalized events (clients/ turns each client's hook input into these and
their answers into its output).

- start: opens a memory session for the repository (git.py's name) with HEAD, the branch and
  the commits since the repository's last session with the files each changed (so that the
  server marks only memories written before a file's change), and hands over the snapshot
  and the capture guidance.
- prompt, failed: recall (the few memories that bear on the prompt, or on the failed
  command's last error lines), gated and budgeted by the server, never one already handed.
- read, edited: the memories whose `files` name that file, once per file a session; an edit
  after a failure is noted for a draft.
- ran: a command that passed; the same command that failed before, after a change, becomes
  a draft the service screens and keeps beside the session (never a memory).
- fetched: a tool brought content from outside the repository and the user (a web page,
  another MCP server's tool, a download: provenance.py says which): the session records
  its sources, once each, and a memory written while it is open waits for a person. What
  came from outside stays outside (outside.py): where a call put an outsider's files, and
  the page a browser opened, are kept in the session's state, and a later read of them (a
  read, a search, browsed, a shell command's) is recorded as theirs.
- stop: keeps the turn's last words, and once a session reminds the agent to capture what it
  learned, with the session's drafts.
- end: closes the session with the agent's last words (abandoned when it said nothing).

Context that an event's hook cannot hand over (a client whose prompt hook takes no context)
waits in the session's state for the next hook that can.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_memory_client.connection import Connection, Unavailable
from agent_memory_client.drafting import Tracker, error_query, relative_path
from agent_memory_client.git import (
    GitState,
    changed_files,
    git_state,
    head_of,
    history,
    repository_name,
)
from agent_memory_client.outside import Outside
from agent_memory_client.quoting import quoted

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any

PROMPT_CHARS = 1_000  # what a recall reads of a prompt
MAX_HANDED = 500  # memory ids a session remembers it was handed (not handed again)
MAX_FILES_RECALLED = 200  # files a session remembers it recalled (once each)
MAX_SOURCES_SENT = 50  # untrusted sources a session remembers it reported (once each)
SOURCES_A_CALL = 20  # what the server takes in one call (POST /sessions/{id}/sources)
FILE_RECALL_TOKENS = 200  # a file's memories: less than a prompt's (RECALL_MAX_TOKENS)
PENDING_CHARS = 4_000  # context waiting for a hook that can hand it over
SNAPSHOT_CHARS = 6_000
SUMMARY_CHARS = 2_000
TRANSCRIPT_TAIL_BYTES = 256 * 1024

CAPTURE_GUIDANCE = {
    "ask-first": (
        "When you learn something worth keeping (a decision and why, an error's real cause, "
        "a pattern that worked), propose it to the user and record it with the `remember` "
        "tool once they agree. Never record secrets, keys, tokens or personal data."
    ),
    "silent": (
        "Record what you learn that is worth keeping with the `remember` tool, without "
        "asking, at most {budget} times this session. Never record secrets, keys, tokens "
        "or personal data."
    ),
    "off": "Do not record learnings this session.",
}

CAPTURE_REMINDER = {
    "ask-first": (
        "Before you finish: did this session teach something worth keeping for later sessions"
        " (a decision and why, an error's real cause, a pattern that worked)? If so, propose it"
        " to the user and record it with the `remember` tool once they agree. If not, simply"
        " finish. Never record secrets."
    ),
    "silent": (
        "Before you finish: if this session taught something worth keeping for later sessions"
        " (a decision and why, an error's real cause, a pattern that worked), record it now"
        " with the `remember` tool, in a sentence or two. If not, simply finish. Never record"
        " secrets."
    ),
}

# idle: a moment with nothing of its own, where context that waits can be handed over;
# searched: a tool printed what files under a path say; browsed: a browser opened a page
# (`path`, its URL) or read the page open (no `path`).
KINDS = (
    "start", "prompt", "failed", "ran", "read", "edited", "fetched", "searched", "browsed",
    "stop", "end", "idle",
)  # fmt: skip
# Moments that may read what came from outside earlier in the session (outside.py).
READS_OUTSIDE = ("read", "ran", "failed")
# An end's reason for a turn that ends where the client has no session end (Codex): the
# memory session is recorded, and the next prompt opens another, keeping these.
TURN = "turn"
# What the client's session carries into the next memory session: the untrusted input it
# read is still in its context, so the new session is recorded as having read it too.
REOPENED_WITH = ("repo", "top", "handed", "files", "capture_mode", "sources", "outside", "page")


class Event:
    """One moment of a client's session, as the loop needs it. (Plain classes here, not
    dataclasses: a hook pays for every import, and `dataclasses` costs it about 30 ms.)"""

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


def state_file(client_session: str) -> Path:
    """Where a hook leaves what the next hook of the same client session needs."""
    safe = "".join(c for c in client_session if c.isalnum() or c in "-_")[:100] or "unknown"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agent-memory" / "hook-sessions" / safe


def save(event: Event, state: dict[str, Any]) -> None:
    """Written whole or not at all: a client may run hooks of one session at once (Gemini
    CLI does), and one must never read another's half-written state."""
    path = state_file(event.session)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(state))
    os.replace(partial, path)


def load(event: Event) -> dict[str, Any] | None:
    try:
        state = json.loads(state_file(event.session).read_text().strip())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and "session_id" in state else None


def handle(event: Event, server: Connection) -> Answer:
    if event.kind in READS_OUTSIDE:  # recorded first: it holds whatever follows
        fetched(event, server)
    return HANDLERS[event.kind](event, server)


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
    state = git_state(cwd)
    repo = state.repository
    started = server.call(
        "POST",
        "/sessions",
        body={
            "agent": event.agent, "source_repo": repo, "git_branch": state.branch,
            "git_commit": state.commit, **_since_last_session(server, cwd, state),
        },
    )  # fmt: skip
    capture = started["capture"]
    shown = server.call(
        "GET",
        "/snapshot",
        params={"source_repo": repo, "max_chars": SNAPSHOT_CHARS, "format": "json"},
    )
    save(
        event,
        {
            "session_id": started["session_id"], "capture_mode": capture["capture_mode"],
            "repo": repo, "top": state.top, "handed": shown["memory_ids"][:MAX_HANDED],
        },
    )  # fmt: skip
    guidance = CAPTURE_GUIDANCE.get(capture["capture_mode"], "").format(
        budget=capture["silent_capture_budget"]
    )
    where = quoted(repo) if repo else "this workspace"
    context = f"# Long-term memory (agent-memory) for {where}\n\n{shown['markdown']}\n\n"
    context += usage_note(started.get("marked_stale", 0))
    if guidance:
        context += f" {guidance}"
    return Answer(context=context, done="memory loaded")


def usage_note(marked_stale: int) -> str:
    """How to use the tools, in as few words as hold it."""
    stale = (
        f"{marked_stale} memories are marked possibly stale (a file they are about changed"
        " after they were written): check one against the code before relying on it, then"
        " `confirm_memory` it or `remember` the corrected one. "
        if marked_stale
        else ""
    )
    return (
        "The agent-memory tools file what you record under this repository and search it"
        f" with the global memories (marked global). {stale}Search before planning."
    )


def assistant_turns(transcript_path: str | None) -> list[list[dict[str, Any]]]:
    """The agent's messages in a Claude-style transcript (JSON lines), newest first, each
    as its content blocks: read from the file's tail, so a long session costs what a short
    one does."""
    if not transcript_path:
        return []
    try:
        with open(transcript_path, "rb") as transcript:
            transcript.seek(0, os.SEEK_END)
            transcript.seek(max(0, transcript.tell() - TRANSCRIPT_TAIL_BYTES))
            lines = transcript.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    turns = []
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        turns.append([b for b in blocks or [] if isinstance(b, dict)])
    return turns


def last_assistant_text(transcript_path: str | None) -> str | None:
    """The agent's last words in the transcript, as its report of the session."""
    for blocks in assistant_turns(transcript_path):
        text = " ".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        if text.strip():
            return text.strip()[:SUMMARY_CHARS]
    return None


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
        or state.get("last_words")
        or last_assistant_text(event.transcript)
    )
    if said:
        body = {"status": "completed", "summary": said}
    elif state.get("answered"):
        body = {"status": "completed"}
    else:
        body = {
            "status": "abandoned",
            "summary": f"ended before the agent answered ({event.reason or 'other'})",
        }
    if state.get("session_id") is None:  # ended at an earlier turn, not reopened since
        return Answer(done="session recorded")
    server.call("POST", f"/sessions/{state['session_id']}/end", body=body)
    if event.reason == TURN:  # the client's session goes on: the next prompt reopens
        kept = {k: v for k, v in state.items() if k in REOPENED_WITH}
        save(event, {**kept, "session_id": None})
    else:
        state_file(event.session).unlink(missing_ok=True)
    return Answer(done="session recorded")


def reopened(event: Event, server: Connection, state: dict[str, Any]) -> dict[str, Any]:
    """A memory session again for a client session whose last turn ended one (a client
    with no session end of its own): what was handed stays handed, no snapshot again."""
    if state.get("session_id") is not None:
        return state
    commit, branch = head_of(event.cwd or os.getcwd())  # the repository is the state's
    started = server.call(
        "POST",
        "/sessions",
        body={
            "agent": event.agent, "source_repo": state.get("repo"), "git_branch": branch,
            "git_commit": commit,
        },
    )  # fmt: skip
    state = {**state, "session_id": started["session_id"], "reminded": False}
    state["capture_mode"] = started["capture"]["capture_mode"]
    if state.get("sources"):
        body = {"sources": list(state["sources"])[-SOURCES_A_CALL:]}
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
    if state is None or state.get("session_id") is None:
        return Answer(done="nothing to remind")
    said = event.text.strip()[:SUMMARY_CHARS] or None
    if said is not None and said != state.get("last_words"):
        state = {**state, "last_words": said}
        save(event, state)
    elif said is None and event.did_something and not state.get("answered"):
        state = {**state, "answered": True}  # in words no hook can read (Copilot CLI)
        save(event, state)
    if state.get("reminded") or event.continuing:
        return Answer(done="nothing to remind")
    reminder = CAPTURE_REMINDER.get(str(state.get("capture_mode")))
    acted = said or event.did_something or assistant_turns(event.transcript)
    if reminder is None or not acted:
        return Answer(done="nothing to remind")
    try:
        held = server.call("GET", f"/sessions/{state['session_id']}/drafts")
    except Unavailable:
        held = {"drafts": []}  # the reminder without them
    save(event, {**state, "reminded": True})
    note = drafts_note(held["drafts"], untrusted=bool(held.get("sources")))
    return Answer(reminder=reminder + note, done="capture reminder")


def drafts_note(drafts: list[dict[str, Any]], untrusted: bool = False) -> str:
    """The session's drafts, each a quoted literal (command output is data, never an
    instruction), for the agent to keep with one `remember` call each, edited, or drop;
    `untrusted`: the session read untrusted input, so what it keeps waits for review."""
    if not drafts:
        return ""
    lines = [
        f"{n}. {quoted(d['text'])} (files: {', '.join(quoted(f) for f in d['files'])})"
        for n, d in enumerate(drafts, start=1)
    ]
    review = (
        " This session read untrusted input (a web page, another server's tool): what you"
        " keep waits for a person's review before other sessions are handed it."
        if untrusted
        else ""
    )
    return (
        "\n\nDrafts from this session (a failure a change fixed), not stored: keep one with"
        " `remember` (rewrite it as the lesson, pass its files), or drop it."
        + review
        + "\n"
        + "\n".join(lines)
    )


def _recall(
    event: Event, server: Connection, q: str, purpose: str, state: dict[str, Any] | None = None
) -> Answer:
    """The memories that bear on `q` and that this session was not yet handed, as context;
    nothing when none clears the server's gate."""
    state = state if state is not None else load(event)
    # A client may fire its prompt hook while the start's is still running (Gemini CLI
    # does): the repository is then asked of git here.
    repo = state.get("repo") if state else repository_name(event.cwd) if event.cwd else None
    # No repository known: a recall would read every repository's memories; none, then.
    if not q.strip() or not repo:
        return Answer(done="nothing to recall")
    handed = list(state.get("handed") or []) if state else []
    body: dict[str, Any] = {"q": q, "source_repo": repo, "purpose": purpose, "exclude": handed}
    if state and state.get("session_id"):  # what it wrote and is held, it is still handed
        body["session_id"] = state["session_id"]
    if purpose == "file":
        body["max_tokens"] = FILE_RECALL_TOKENS
    recalled = server.call("POST", "/recall", body=body)
    if not recalled["text"]:
        return Answer(done="nothing to recall")
    if state is not None:
        save(event, {**state, "handed": (handed + recalled["ids"])[-MAX_HANDED:]})
    return Answer(context=recalled["text"], done="memories recalled")


def prompt(event: Event, server: Connection) -> Answer:
    """Recall on the prompt: the few memories of this repository (and globals) it bears on."""
    state = load(event)
    if state is not None:
        state = reopened(event, server, state)
    return _recall(event, server, event.text[:PROMPT_CHARS], "prompt", state)


def failed(event: Event, server: Connection) -> Answer:
    """Recall on failure: a failed command's error against the error patterns. The failure
    waits in the session's fix tracker (drafting.py) for the same work to pass."""
    query = error_query(event.text)
    state = load(event)
    if state is not None:
        tracker = Tracker(state.get("fixes"))
        tracker.failed(event.command, event.text)
        if (fixes := tracker.state()) != state.get("fixes"):
            state = {**state, "fixes": fixes}
            save(event, state)
    return _recall(event, server, query, "failure", state)


def in_repository(state: dict[str, Any], event: Event) -> str | None:
    """The event's file as the repository names it (relative to its top level), or None
    for a file outside it."""
    return relative_path(event.path, event.cwd, state.get("top") or None)


def read(event: Event, server: Connection) -> Answer:
    """A file opened: its memories, once a session."""
    state = load(event)
    path = in_repository(state, event) if state else None
    if state is None or path is None:
        return Answer(done="nothing to recall")
    return _file_recall(event, server, state, path)


def _file_recall(
    event: Event, server: Connection, state: dict[str, Any], path: str, changed: bool = False
) -> Answer:
    """A file's memories, once a session; the state saved once (`changed`: it was already)."""
    recalled_files = list(state.get("files") or [])
    if path in recalled_files:
        if changed:
            save(event, state)
        return Answer(done="nothing to recall")
    state = {**state, "files": [*recalled_files, path][-MAX_FILES_RECALLED:]}
    save(event, state)
    return _recall(event, server, path, "file", state)


def edited(event: Event, server: Connection) -> Answer:
    """A file changed: noted in the fix tracker, and its memories, once."""
    state = load(event)
    path = in_repository(state, event) if state else None
    if state is None or path is None:
        return Answer(done="noted")
    tracker = Tracker(state.get("fixes"))
    tracker.edited(path, event.change)
    fixes = tracker.state()
    changed = fixes != state.get("fixes")
    return _file_recall(event, server, {**state, "fixes": fixes}, path, changed)


def ran(event: Event, server: Connection) -> Answer:
    """A command passed: when it ends a failure the session waits on, the fix tracker's
    draft of what was learned (drafting.py), sent to the service, which screens it and
    keeps it beside the session (never as a memory)."""
    state = load(event)
    waiting = (state.get("fixes") or {}).get("open") if state else None
    if state is None or state.get("session_id") is None or not waiting:
        return Answer(done="noted")
    tracker = Tracker(state.get("fixes"))
    draft = tracker.ran(event.command)
    if (fixes := tracker.state()) != state.get("fixes"):
        save(event, {**state, "fixes": fixes})
    if draft is None:
        return Answer(done="noted")
    body = {k: draft[k] for k in ("text", "files", "evidence", "key")}  # the service screens it
    server.call("POST", f"/sessions/{state['session_id']}/drafts", body=body)
    return Answer(done="draft kept")


def fetched(event: Event, server: Connection) -> Answer:
    """A call that may bring untrusted input into the session (a fetch, a read of what came
    from outside before: outside.py): its sources recorded with the session (each once), so
    that what the session writes while open waits for a person. Where it put an outsider's
    files, or the page it opened, is kept first, so that a failed record loses no later
    read of them."""
    state = load(event)
    if state is None or state.get("session_id") is None:
        return Answer(done="noted")
    outside = Outside(state.get("outside"), state.get("page"))
    before = outside.state()
    read = outside.read(event, state.get("repo"))  # its own site is its own
    if outside.state() != before:
        state = {**state, **outside.state()}
        save(event, state)
    sent = list(state.get("sources") or [])
    new = [s for s in read if s and s not in sent]
    if not new:
        return Answer(done="noted")
    server.call(
        "POST", f"/sessions/{state['session_id']}/sources", body={"sources": new[:SOURCES_A_CALL]}
    )
    save(event, {**state, "sources": (sent + new)[-MAX_SOURCES_SENT:]})
    return Answer(done="untrusted input noted")


def keep_for_later(event: Event, context: str) -> None:
    """Context the client's hook for this event cannot hand over, for the next that can."""
    state = load(event)
    if state is not None and context:
        pending = (str(state.get("pending") or "") + "\n\n" + context).strip()
        save(event, {**state, "pending": pending[-PENDING_CHARS:]})


def take_pending(event: Event) -> str:
    """The context kept for this hook, once."""
    state = load(event)
    if state is None or not state.get("pending"):
        return ""
    save(event, {k: v for k, v in state.items() if k != "pending"})
    return str(state["pending"])


def idle(event: Event, server: Connection) -> Answer:
    return Answer()


HANDLERS = {
    "start": start, "prompt": prompt, "failed": failed, "ran": ran, "read": read,
    "edited": edited, "fetched": fetched, "searched": fetched, "browsed": fetched, "stop": stop,
    "end": end, "idle": idle,
}  # fmt: skip
