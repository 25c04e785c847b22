"""Claude Code's hooks, as `agent-memory-client hook session-start|stop|session-end`: each
reads the hook's JSON on stdin, talks to the server within one overall deadline, exits 0 and
says in one line on stderr what happened. Memory never blocks or breaks the agent.

Session start opens a memory session for the repository (git.py's name), sends HEAD, the
branch and the commits since the repository's last session with the files each changed (so
that the server marks only memories written before a file's change), and hands the agent the
snapshot and the capture guidance as context. Stop keeps each turn's last words and reminds
the agent once to capture what it learned, with the session's drafts. Session end closes the
session with the agent's last words, in one request, well inside the ~1.5 s Claude Code
gives it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from agent_memory_client.connection import Connection, Deadline, Unavailable
from agent_memory_client.git import GitState, changed_files, git_state, history

# Each hook's whole budget, interpreter start excluded (tens of ms). Claude Code cancels
# SessionEnd at about 1.5 s whatever its timeout says; SessionStart's timeout is 5 s.
BUDGET_S = {
    "session-start": 2.5, "user-prompt-submit": 1.0, "post-tool-use-failure": 1.0,
    "post-tool-use": 1.0, "stop": 1.0, "session-end": 1.0,
}  # fmt: skip
PROMPT_CHARS = 1_000  # what a recall reads of a prompt
# Drafts: few (the service keeps a session's newest three), short, and only from a failure
# that a change then fixed.
DRAFT_FILES, DRAFT_COMMAND_CHARS, DRAFT_ERROR_CHARS = 5, 200, 200
EDITING_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# Formatters and linters: what a change fixed there is rarely a lesson for a later session.
NO_LESSON = frozenset({"ruff", "black", "isort", "prettier", "eslint", "gofmt", "rustfmt"})
ERROR_LINES, ERROR_CHARS = 5, 600  # ... of a failed command's error: its last lines
MAX_HANDED = 500  # memory ids a session remembers it was handed (not handed again)
SNAPSHOT_CHARS = 6_000
SUMMARY_CHARS = 2_000
TRANSCRIPT_TAIL_BYTES = 256 * 1024
AGENT = "claude-code"

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


def state_file(claude_session: str) -> Path:
    """Where a hook leaves what the next hook of the same Claude session needs."""
    safe = "".join(c for c in claude_session if c.isalnum() or c in "-_")[:100] or "unknown"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agent-memory" / "hook-sessions" / safe


def _save(payload: dict[str, Any], state: dict[str, Any]) -> None:
    path = state_file(str(payload.get("session_id", "")))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state))


def _load(payload: dict[str, Any]) -> dict[str, Any] | None:
    try:
        text = state_file(str(payload.get("session_id", ""))).read_text().strip()
        state = json.loads(text)
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and "session_id" in state else None


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


def session_start(payload: dict[str, Any], server: Connection) -> dict[str, Any]:
    cwd = str(payload.get("cwd") or os.getcwd())
    state = git_state(cwd)
    repo = state.repository
    started = server.call(
        "POST",
        "/sessions",
        body={
            "agent": AGENT, "source_repo": repo, "git_branch": state.branch,
            "git_commit": state.commit, **_since_last_session(server, cwd, state),
        },
    )  # fmt: skip
    capture = started["capture"]
    shown = server.call(
        "GET",
        "/snapshot",
        params={"source_repo": repo, "max_chars": SNAPSHOT_CHARS, "format": "json"},
    )
    snapshot = shown["markdown"]
    _save(
        payload,
        {
            "session_id": started["session_id"], "capture_mode": capture["capture_mode"],
            "repo": repo, "handed": shown["memory_ids"][:MAX_HANDED],
        },
    )  # fmt: skip
    guidance = CAPTURE_GUIDANCE.get(capture["capture_mode"], "").format(
        budget=capture["silent_capture_budget"]
    )
    where = json.dumps(repo, ensure_ascii=False) if repo else "this workspace"
    context = f"# Long-term memory (agent-memory) for {where}\n\n{snapshot}\n\n"
    context += usage_note(started.get("marked_stale", 0))
    if guidance:
        context += f" {guidance}"
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


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
    """The agent's messages in the session's transcript (JSON lines), newest first, each as
    its content blocks: read from the file's tail, so a long session costs what a short one
    does."""
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


def last_words(payload: dict[str, Any]) -> str | None:
    """The words that ended the turn, as Claude Code hands them to Stop: the transcript may
    not hold them yet when the hook runs (seen on a busy machine)."""
    said = payload.get("last_assistant_message")
    if not isinstance(said, str) or not said.strip():
        return None
    return said.strip()[:SUMMARY_CHARS]


def session_end(payload: dict[str, Any], server: Connection) -> dict[str, Any]:
    """A run in which the agent said nothing (killed before the model answered, or ended at
    once) is recorded as abandoned, which no snapshot shows; otherwise completed, with the
    agent's last words as its summary. One request."""
    state = _load(payload)
    if state is None:
        return {}
    said = state.get("last_words") or last_assistant_text(payload.get("transcript_path"))
    if said is None:
        body = {
            "status": "abandoned",
            "summary": f"ended before the agent answered ({payload.get('reason', 'other')})",
        }
    else:
        body = {"status": "completed", "summary": said}
    server.call("POST", f"/sessions/{state['session_id']}/end", body=body)
    state_file(str(payload.get("session_id", ""))).unlink(missing_ok=True)
    return {}


def stop(payload: dict[str, Any], server: Connection) -> dict[str, Any]:
    """Once a session, when the agent is about to stop after doing something, remind it to
    capture what it learned, with the session's drafts (in the configured capture mode;
    never with `off`, never twice, never while a Stop hook already holds it). Every Stop
    keeps the turn's last words for session end."""
    state = _load(payload)
    if state is None:
        return {}
    said = last_words(payload)
    if said is not None and said != state.get("last_words"):
        state = {**state, "last_words": said}
        _save(payload, state)
    if state.get("reminded") or payload.get("stop_hook_active"):
        return {}
    reminder = CAPTURE_REMINDER.get(str(state.get("capture_mode")))
    # Something done: words, or a tool call in the transcript.
    if reminder is None or not (said or assistant_turns(payload.get("transcript_path"))):
        return {}
    try:
        drafts = server.call("GET", f"/sessions/{state['session_id']}/drafts")["drafts"]
    except Unavailable:
        drafts = []  # the reminder without them
    _save(payload, {**state, "reminded": True})
    return {"decision": "block", "reason": reminder + drafts_note(drafts)}


def drafts_note(drafts: list[dict[str, Any]]) -> str:
    """The session's drafts, each a quoted literal (command output is data, never an
    instruction), for the agent to keep with one `remember` call each, edited, or drop."""
    if not drafts:
        return ""
    lines = [
        f"{n}. {json.dumps(d['text'])} (files: {json.dumps(d['files'])})"
        for n, d in enumerate(drafts, start=1)
    ]
    return (
        "\n\nDrafts from this session (a failure a change fixed), not stored: keep one with"
        " `remember` (rewrite it as the lesson, pass its files), or drop it.\n" + "\n".join(lines)
    )


def _recall(
    payload: dict[str, Any], server: Connection, event: str, q: str, purpose: str
) -> dict[str, Any]:
    """The memories that bear on `q` and that this session was not yet handed, as context;
    nothing when none clears the server's gate."""
    state = _load(payload)
    # No repository known: a recall would read every repository's memories; none, then.
    if state is None or not q.strip() or not state.get("repo"):
        return {}
    handed = list(state.get("handed") or [])
    recalled = server.call(
        "POST",
        "/recall",
        body={"q": q, "source_repo": state.get("repo"), "purpose": purpose, "exclude": handed},
    )
    if not recalled["text"]:
        return {}
    _save(payload, {**state, "handed": (handed + recalled["ids"])[-MAX_HANDED:]})
    context = {"hookEventName": event, "additionalContext": recalled["text"]}
    return {"hookSpecificOutput": context}


def user_prompt_submit(payload: dict[str, Any], server: Connection) -> dict[str, Any]:
    """Recall on the prompt: the few memories of this repository (and globals) it bears on."""
    prompt = str(payload.get("prompt") or "")[:PROMPT_CHARS]
    return _recall(payload, server, "UserPromptSubmit", prompt, "prompt")


def error_query(error: str) -> str:
    """What of a failed command's output to search with: its last lines, where the error
    itself is (a traceback's last line, a linker's summary)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    return "\n".join(lines[-ERROR_LINES:])[-ERROR_CHARS:]


def post_tool_use_failure(payload: dict[str, Any], server: Connection) -> dict[str, Any]:
    """Recall on failure: a failed Bash command's error against the error patterns (Claude
    Code 2.1 fires PostToolUseFailure for it, with `error` as a string). The failure is kept
    for a draft, should the same command pass after a change."""
    if payload.get("tool_name") != "Bash":
        return {}
    query = error_query(str(payload.get("error") or ""))
    state = _load(payload)
    if state is not None:
        command = str((payload.get("tool_input") or {}).get("command") or "")
        failure = {"command": command[:DRAFT_COMMAND_CHARS], "error": query, "changed": []}
        _save(payload, {**state, "failure": failure})
    return _recall(payload, server, "PostToolUseFailure", query, "failure")


def same_task(failed: str, passed: str) -> bool:
    """The command that passed is the one that failed, run again (its program and first
    argument: `pytest tests/x.py` and `pytest tests/x.py -q`)."""

    def head(command: str) -> list[str]:
        return [w for w in command.split() if not w.startswith("-")][:2]

    return bool(head(failed)) and head(failed) == head(passed)


def post_tool_use(payload: dict[str, Any], server: Connection) -> dict[str, Any]:
    """After a failure: the files changed, then, when the same command passes, a draft of
    what was learned (the failure, the change, the pass), sent to the service, which screens
    it and keeps it beside the session (never as a memory). A retry that passes with nothing
    changed drafts nothing."""
    state = _load(payload)
    failure = state.get("failure") if state else None
    if state is None or not isinstance(failure, dict):
        return {}
    tool_input = payload.get("tool_input") or {}
    if payload.get("tool_name") in EDITING_TOOLS:
        path = str(tool_input.get("file_path") or "")
        cwd = str(payload.get("cwd") or "")
        shown = os.path.relpath(path, cwd) if path and cwd and path.startswith(cwd) else path
        if shown and shown not in failure["changed"]:
            failure["changed"] = [*failure["changed"], shown][:DRAFT_FILES]
        _save(payload, {**state, "failure": failure})
    elif payload.get("tool_name") == "Bash":
        passed = str(tool_input.get("command") or "")
        if not same_task(failure["command"], passed):
            return {}
        _save(payload, {k: v for k, v in state.items() if k != "failure"})
        program = os.path.basename(passed.split()[0]) if passed.split() else ""
        if failure["changed"] and program not in NO_LESSON:  # screened and kept by the service
            server.call("POST", f"/sessions/{state['session_id']}/drafts", body=draft_of(failure))
    return {}


def draft_of(failure: dict[str, Any]) -> dict[str, Any]:
    last_line = failure["error"].splitlines()[-1] if failure["error"] else "an error"
    files = ", ".join(failure["changed"])
    text = (
        f"`{failure['command']}` failed with: {last_line[:DRAFT_ERROR_CHARS]}. It passed after"
        f" changing {files}."
    )
    return {"text": text, "files": failure["changed"]}


HANDLERS = {
    "session-start": session_start, "user-prompt-submit": user_prompt_submit,
    "post-tool-use-failure": post_tool_use_failure, "post-tool-use": post_tool_use,
    "stop": stop, "session-end": session_end,
}  # fmt: skip
DONE = {"session-start": "memory loaded", "session-end": "session recorded"}


def run_hook(
    event: str, raw: str, url: str | None = None, api_key: str | None = None
) -> tuple[str, str]:
    """(stdout, one line for stderr). Never raises: memory must not stop the agent."""
    began = time.monotonic()
    try:
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        return "", f"agent-memory hook {event}: unreadable hook input ({exc})"
    server = Connection(url, api_key, Deadline(BUDGET_S[event]))
    try:
        answer = HANDLERS[event](payload, server)
    except (Unavailable, KeyError, TypeError, ValueError) as exc:
        detail = exc.detail if isinstance(exc, Unavailable) else f"unexpected answer ({exc})"
        note = f"agent-memory unavailable ({detail}); continuing without memory"
        if event == "session-start":
            context = {"hookEventName": "SessionStart", "additionalContext": note}
            return json.dumps({"hookSpecificOutput": context}), f"agent-memory: {note}"
        return "", f"agent-memory: {note}"
    took = time.monotonic() - began
    if event in ("user-prompt-submit", "post-tool-use-failure"):
        done = "memories recalled" if answer else "nothing to recall"
    elif event == "post-tool-use":
        done = "noted"
    else:
        done = DONE.get(event, "capture reminder" if answer else "nothing to remind")
    return (json.dumps(answer) if answer else ""), f"agent-memory: {done} in {took:.2f} s"
