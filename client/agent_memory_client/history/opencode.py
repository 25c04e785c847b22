"""OpenCode's sessions, as `opencode export` writes one: a JSON object with `info` (the
session's `id` and `directory`) and `messages`, each with its `info.role` and `parts`
(seen in files of 1.2.20 to 1.2.26). A `text` part of a user message is the prompt (a
`synthetic` one is the client's); a `tool` part is a call, with `state.input`,
`state.output`, `state.status` and, for `bash`, `state.metadata.exit`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_memory_client.clients.base import replaced, shell_call, tool_call
from agent_memory_client.history import Moment, Transcript
from agent_memory_client.history.clues import clues_in
from agent_memory_client.history.formats import whole_text
from agent_memory_client.loop import Event

CLIENT = "opencode"
EDITING_TOOLS = frozenset({"edit", "write", "patch", "multiedit"})
READING_TOOL, SEARCH_TOOL = "read", "grep"


def recognises(head: str) -> int:
    """How surely a file is of this format, from its first bytes (history/formats.py): 2,
    a sign of this format alone; 0, none."""
    return (
        2
        if head.lstrip().startswith("{") and '"info"' in head[:400] and '"messages"' in head
        else 0
    )


def read(path: Path) -> Transcript | None:
    try:
        whole = json.loads(whole_text(path))
    except ValueError:
        return None
    if not isinstance(whole, dict) or not isinstance(whole.get("messages"), list):
        return None
    info: dict[str, Any] = whole["info"] if isinstance(whole.get("info"), dict) else {}
    transcript = Transcript(
        CLIENT, str(info.get("id") or path.stem), str(info.get("directory") or ""), path
    )
    base = Event("start", transcript.session, CLIENT, cwd=transcript.cwd)
    sub = bool(info.get("parentID"))  # a subagent's session: its prompts are an agent's
    for message in whole["messages"]:
        if not isinstance(message, dict):
            continue
        said_at = (message.get("info") or {}).get("time") or {}
        role = (message.get("info") or {}).get("role")
        for part in message.get("parts") or []:
            if not isinstance(part, dict):
                continue
            call = part.get("callID")
            anchor = str(call if call and call != "REDACTED" else part.get("id"))
            started = ((part.get("state") or {}).get("time") or {}).get("start")
            at = iso_of(started or said_at.get("created"))
            if part.get("type") == "text" and role == "user" and not part.get("synthetic"):
                said = str(part.get("text") or "")
                transcript.moments.append(Moment(at, base.at("prompt", text=said), anchor, sub))
            elif part.get("type") == "tool":
                for event in _tool(transcript, base, part, anchor):
                    transcript.moments.append(Moment(at, event, anchor, sub))
    return transcript


def iso_of(milliseconds: Any) -> str:
    """OpenCode's time (milliseconds since the epoch) as ISO 8601, what a draft's `seen_at`
    and `--since` read; "" when there is none."""
    if not isinstance(milliseconds, (int, float)) or isinstance(milliseconds, bool):
        return ""
    return datetime.fromtimestamp(milliseconds / 1000, UTC).isoformat()


def _tool(transcript: Transcript, base: Event, part: dict[str, Any], anchor: str) -> list[Event]:
    name = str(part.get("tool") or "")
    state: dict[str, Any] = part["state"] if isinstance(part.get("state"), dict) else {}
    given: dict[str, Any] = state["input"] if isinstance(state.get("input"), dict) else {}
    output = str(state.get("output") or state.get("error") or "")
    if name == "bash":
        command = str(given.get("command") or "")
        transcript.clues += clues_in(command, output, anchor)
        code = (state.get("metadata") or {}).get("exit")
        code = code if isinstance(code, int) else int(state.get("status") == "error")
        return shell_call(base, command, output, code)
    if name in EDITING_TOOLS:
        path = given.get("filePath") or given.get("file_path") or ""
        change = replaced(given.get("oldString"), given.get("newString"))
        ok = state.get("status") == "completed"
        return [base.at("edited", path=str(path), change=change)] if ok else []
    if name == READING_TOOL:
        return [base.at("read", path=str(given.get("filePath") or given.get("file_path") or ""))]
    if name == SEARCH_TOOL:
        return [base.at("searched", path=str(given.get("path") or ""))]
    return tool_call(base, name, given)
