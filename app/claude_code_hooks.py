"""Claude Code's session hooks, as `agent-memory hook session-start|session-end`: they read
the hook's JSON on stdin and talk to the server through the typed client.

A hook never blocks or breaks the agent: each gives up within HOOK_BUDGET_S, exits 0, and
says in one line what happened. Session start opens a memory session for the repository
(the git top level's name, or AGENT_MEMORY_REPO) and hands the agent the snapshot and the
capture guidance as additional context; session end closes that session with the agent's
last message as its summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import platformdirs

from app.client import ClientError, MemoryClient

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


def repository_of(cwd: str | None) -> str | None:
    """What the memories are filed under: AGENT_MEMORY_REPO, else the git top level's
    directory name, else the working directory's."""
    if named := os.environ.get("AGENT_MEMORY_REPO"):
        return named
    if not cwd:
        return None
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=0.5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        top = cwd
    return Path(top or cwd).name or None


def _state_file(claude_session: str) -> Path:
    safe = "".join(c for c in claude_session if c.isalnum() or c in "-_")[:100] or "unknown"
    return Path(platformdirs.user_cache_dir("agent-memory")) / "hook-sessions" / safe


def session_start(payload: dict[str, Any], client: MemoryClient) -> dict[str, Any]:
    repo = repository_of(payload.get("cwd"))
    started = client.start_session(source_repo=repo, agent=AGENT)
    snapshot = client.snapshot(repo, SNAPSHOT_CHARS, format="markdown")
    state = _state_file(str(payload.get("session_id", "")))
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(started["session_id"])
    capture = started["capture"]
    guidance = CAPTURE_GUIDANCE.get(capture["capture_mode"], "").format(
        budget=capture["silent_capture_budget"]
    )
    context = f"# Long-term memory (agent-memory) for {repo or 'this workspace'}\n\n{snapshot}"
    if guidance:
        context += f"\n\n## Capturing learnings\n\n{guidance}"
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


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


def session_end(payload: dict[str, Any], client: MemoryClient) -> dict[str, Any]:
    state = _state_file(str(payload.get("session_id", "")))
    if not state.exists():
        return {}
    session_id = state.read_text().strip()
    summary = last_assistant_text(payload.get("transcript_path")) or (
        f"Claude Code session ended ({payload.get('reason', 'other')})"
    )
    client.end_session(session_id, "completed", summary=summary)
    state.unlink(missing_ok=True)
    return {}


HANDLERS = {"session-start": session_start, "session-end": session_end}


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
    done = "memory loaded" if event == "session-start" else "session recorded"
    return (json.dumps(answer) if answer else ""), f"agent-memory: {done} in {took:.1f} s"
