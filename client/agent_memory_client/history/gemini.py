"""Gemini CLI's sessions: `~/.gemini/tmp/<project>/chats/session-*.json(l)` (seen in files
of 0.2x to 0.61): one JSON object with `messages`, or JSON lines (a header with the
session's id, then message records that repeat as they change, and `$set` lines that
replace the list). A message is `user` (the prompt), `gemini` (with `toolCalls`: `id`,
`name`, `args`, `status`, `result[].functionResponse.response.output|error`) or `info`.

The session's folder is not recorded apart: its first message's `<session_context>` names
the workspace. `run_shell_command`'s output carries `Exit Code: N`; a call whose status is
`cancelled` is no failure."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agent_memory_client.clients.base import change_of, fetched, shell_call, tool_call
from agent_memory_client.clients.gemini import (
    EDITING_TOOLS,
    READING_TOOLS,
    SEARCH_TOOLS,
    read_path,
    searched_path,
)
from agent_memory_client.history import Moment, Transcript
from agent_memory_client.history.clues import clues_in
from agent_memory_client.history.formats import content_text, whole_text
from agent_memory_client.loop import Event
from agent_memory_client.provenance import command_sources
from agent_memory_client.shell import exit_code_in

CLIENT = "gemini-cli"
SHELL_TOOL = "run_shell_command"
_WORKSPACE = re.compile(r"Workspace Directories:\*{0,2}\s*\n\s*-\s*(\S[^\n]*)")
_CONTEXT = re.compile(r"^\s*<(?:session_context|hook_context|system)")
# The shell tool's own framing of what a command printed.
_FRAMING = re.compile(
    r"^(?:Command|Directory|Signal|Background PIDs|Process Group PGID|Exit Code):[^\n]*\n?"
    r"|^Error: \(none\)\n?|^Output: ?",
    re.MULTILINE,
)


def recognises(head: str) -> int:
    """How surely a file is of this format, from its first bytes (history/formats.py): 2,
    a sign of this format alone; 0, none."""
    return 2 if '"projectHash"' in head[:2_000] else 0


def transcript_files(root: Path) -> list[Path]:
    return sorted([*(root / "tmp").glob("*/chats/*.json"), *(root / "tmp").glob("*/chats/*.jsonl")])


def _messages(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the session's header, its messages, each once as it last was)."""
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        return whole, [m for m in whole["messages"] if isinstance(m, dict)]
    header: dict[str, Any] = {}
    by_id: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if "$set" in entry and isinstance(entry["$set"], dict):
            records = entry["$set"].get("messages") or []
        elif entry.get("type"):
            records = [entry]
        else:
            header = header or entry
            records = []
        for record in records:
            if isinstance(record, dict) and record.get("id"):
                by_id[str(record["id"])] = record
    return header, list(by_id.values())


def read(path: Path) -> Transcript | None:
    header, messages = _messages(whole_text(path))
    if not messages:
        return None
    said_first = (content_text(m.get("content")) for m in messages[:3])
    workspace = next(filter(None, map(_WORKSPACE.search, said_first)), None)
    cwd = workspace.group(1).strip() if workspace else ""
    transcript = Transcript(CLIENT, str(header.get("sessionId") or path.stem), cwd, path)
    base = Event("start", transcript.session, CLIENT, cwd=cwd)
    for message in messages:
        at, anchor = str(message.get("timestamp") or ""), str(message.get("id"))
        if message.get("type") == "user":
            said = content_text(message.get("content"))
            if said.strip() and not _CONTEXT.match(said):
                transcript.moments.append(Moment(at, base.at("prompt", text=said), anchor))
        for call in message.get("toolCalls") or [] if message.get("type") == "gemini" else []:
            if isinstance(call, dict):
                for event in _call(transcript, base, call):
                    transcript.moments.append(Moment(at, event, str(call.get("id"))))
    return transcript


def _call(transcript: Transcript, base: Event, call: dict[str, Any]) -> list[Event]:
    name, args = str(call.get("name") or ""), call.get("args")
    args = args if isinstance(args, dict) else {}
    outputs = []
    for result in call.get("result") or []:
        response = (result.get("functionResponse") or {}).get("response") or {}
        outputs.append(str(response.get("output") or response.get("error") or ""))
    output, status = "\n".join(outputs), call.get("status")
    if name == SHELL_TOOL:
        command = str(args.get("command") or "")
        if status == "cancelled":
            return fetched(base, command_sources(command), command)
        transcript.clues += clues_in(command, output, str(call.get("id")))
        code = exit_code_in(output)
        code = code if code is not None else int(status == "error")
        return shell_call(base, command, _FRAMING.sub("", output), code)
    if name in EDITING_TOOLS:
        if status != "success":
            return []
        change = change_of(args)
        return [base.at("edited", path=str(args.get("file_path") or ""), change=change)]
    if name in READING_TOOLS:
        return [base.at("read", path=read_path(args))]
    if name in SEARCH_TOOLS:
        return [base.at("searched", path=searched_path(args))]
    return tool_call(base, name, args)
