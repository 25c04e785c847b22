"""Claude Code's session hooks, as `agent-memory hook session-start|session-end`: they read
the hook's JSON on stdin and talk to the server through the typed client.

A hook never blocks or breaks the agent: each gives up within HOOK_BUDGET_S, exits 0, and
says in one line what happened. Session start opens a memory session for the repository
(app/git_repository.py: AGENT_MEMORY_REPO, the origin remote's owner/name, or the top
level's name), sends HEAD, the branch and the files changed since the repository's last
session (so memories about them are marked possibly stale), and hands the agent the
snapshot, the repository name to use and the capture guidance as additional context;
session end closes that session with the agent's last message as its summary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import platformdirs

from app.client import ClientError, MemoryClient
from app.git_repository import GitState, changed_files, git_state

HOOK_BUDGET_S = 2.0
SNAPSHOT_CHARS = 6_000
SUMMARY_CHARS = 2_000
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


def _state_file(claude_session: str) -> Path:
    safe = "".join(c for c in claude_session if c.isalnum() or c in "-_")[:100] or "unknown"
    return Path(platformdirs.user_cache_dir("agent-memory")) / "hook-sessions" / safe


def _changed_since_last_session(
    client: MemoryClient, cwd: str | None, state: GitState
) -> list[str] | None:
    """The files changed between the commit the repository's last session started at and
    HEAD (what git can tell within its time bound; None when it cannot)."""
    if not cwd or not state.repository or not state.commit:
        return None
    last = client.sessions(source_repo=state.repository, limit=1)
    since = last[0].get("git_commit") if last else None
    if not since or since == state.commit:
        return None
    return changed_files(cwd, since, state.commit)


def session_start(payload: dict[str, Any], client: MemoryClient) -> dict[str, Any]:
    cwd = payload.get("cwd")
    state = git_state(cwd)
    repo = state.repository
    changed = _changed_since_last_session(client, cwd, state)
    started = client.start_session(
        source_repo=repo,
        agent=AGENT,
        git_branch=state.branch,
        git_commit=state.commit,
        changed_files=changed,
    )
    snapshot = client.snapshot(repo, SNAPSHOT_CHARS, format="markdown")
    capture = started["capture"]
    _save(payload, {"session_id": started["session_id"], "capture_mode": capture["capture_mode"]})
    guidance = CAPTURE_GUIDANCE.get(capture["capture_mode"], "").format(
        budget=capture["silent_capture_budget"]
    )
    where = json.dumps(repo, ensure_ascii=False) if repo else "this workspace"
    context = f"# Long-term memory (agent-memory) for {where}\n\n{snapshot}"
    context += "\n\n## Using the memory\n\n" + usage_note(repo, started.get("marked_stale", 0))
    if guidance:
        context += f"\n\n## Capturing learnings\n\n{guidance}"
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


def usage_note(repo: str | None, marked_stale: int) -> str:
    """The exact repository name the tools want, and what the marks mean."""
    where = (
        f"Use source_repo={json.dumps(repo, ensure_ascii=False)} with the agent-memory tools"
        " (store_memory, remember, search_memories, get_strategy_hint) so that what you"
        " store reaches the next session here."
        if repo
        else "This workspace is no git repository: memories stored without source_repo"
        " are global (they reach every repository's sessions)."
    )
    stale = (
        f" {marked_stale} memories are marked possibly stale: files they are about changed"
        " since the last session."
        if marked_stale
        else ""
    )
    return (
        f"{where} Memories marked global hold in every repository.{stale} Before relying on"
        " a memory marked possibly stale, check it against the code; then confirm it"
        " (confirm_memory) or store the corrected one."
    )


def last_assistant_text(transcript_path: str | None) -> str | None:
    """The agent's last words in the session's transcript (JSON lines), as its report."""
    if not transcript_path:
        return None
    try:
        lines = Path(transcript_path).read_text(errors="replace").splitlines()[-200:]
    except OSError:
        return None
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        parts = (
            [content]
            if isinstance(content, str)
            else [part.get("text", "") for part in content or [] if isinstance(part, dict)]
        )
        text = " ".join(p for p in parts if p).strip()
        if text:
            return text[:SUMMARY_CHARS]
    return None


def _save(payload: dict[str, Any], state: dict[str, Any]) -> None:
    path = _state_file(str(payload.get("session_id", "")))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state))


def _load(payload: dict[str, Any]) -> dict[str, Any] | None:
    path = _state_file(str(payload.get("session_id", "")))
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    try:
        state = json.loads(text)
    except ValueError:
        return {"session_id": text}  # a state file of an earlier version: the id alone
    return state if isinstance(state, dict) else None


def session_end(payload: dict[str, Any], client: MemoryClient) -> dict[str, Any]:
    """A run in which the agent said nothing (killed before the model answered, or ended at
    once) is recorded as abandoned, which no snapshot shows; otherwise completed, with the
    agent's last words as its summary."""
    state = _load(payload)
    if state is None:
        return {}
    said = last_assistant_text(payload.get("transcript_path"))
    if said is None:
        reason = f"ended before the agent answered ({payload.get('reason', 'other')})"
        client.end_session(state["session_id"], "abandoned", summary=reason)
    else:
        client.end_session(state["session_id"], "completed", summary=said)
    _state_file(str(payload.get("session_id", ""))).unlink(missing_ok=True)
    return {}


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


def stop(payload: dict[str, Any], client: MemoryClient) -> dict[str, Any]:
    """Once a session, when the agent is about to stop after doing something, remind it to
    capture what it learned (in the configured capture mode; never with `off`, never twice,
    never while a Stop hook already holds it)."""
    state = _load(payload)
    if state is None or state.get("reminded") or payload.get("stop_hook_active"):
        return {}
    reminder = CAPTURE_REMINDER.get(str(state.get("capture_mode")))
    if reminder is None or last_assistant_text(payload.get("transcript_path")) is None:
        return {}
    _save(payload, {**state, "reminded": True})
    return {"decision": "block", "reason": reminder}


HANDLERS = {"session-start": session_start, "session-end": session_end, "stop": stop}


def run_hook(event: str, raw: str, url: str | None, api_key: str | None) -> tuple[str, str]:
    """(stdout, one line for stderr). Never raises: memory must not stop the agent."""
    began = time.monotonic()
    try:
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        return "", f"agent-memory hook {event}: unreadable hook input ({exc})"
    try:
        with MemoryClient(url, api_key, timeout_s=HOOK_BUDGET_S / 2) as client:
            answer = HANDLERS[event](payload, client)
    except ClientError as exc:
        note = f"agent-memory unavailable ({exc.detail}); continuing without memory"
        if event == "session-start":
            context = {"hookEventName": "SessionStart", "additionalContext": note}
            return json.dumps({"hookSpecificOutput": context}), f"agent-memory: {note}"
        return "", f"agent-memory: {note}"
    took = time.monotonic() - began
    done = {"session-start": "memory loaded", "session-end": "session recorded"}.get(
        event, "capture reminder" if answer else "nothing to remind"
    )
    return (json.dumps(answer) if answer else ""), f"agent-memory: {done} in {took:.1f} s"
