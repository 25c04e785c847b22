"""GitHub Copilot CLI's sessions: `~/.copilot/session-state/<id>/events.jsonl` (seen in
files of 1.0.64), one event a line (`type`, `data`, `id`, `timestamp`):

- `session.start`: the session's id and `context` (`cwd`, `repository` as `owner/name`);
- `user.message`: the user's prompt (`content`);
- `tool.execution_start` (`toolCallId`, `toolName`, `arguments`) and
  `tool.execution_complete` (`success`, `result.content`): the shell is `bash` (its status
  in the text, `<shellId: N completed with exit code C>`), edits `edit` and `create`, the
  question to the user `ask_user`, a file's read `view`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_memory_client.clients.base import replaced, shell_call, tool_call
from agent_memory_client.history import Moment, Transcript
from agent_memory_client.history.clues import clues_in, recorded
from agent_memory_client.history.formats import json_lines
from agent_memory_client.loop import Event
from agent_memory_client.shell import exit_code_in

CLIENT = "copilot-cli"
SHELL_TOOLS = frozenset({"bash", "powershell"})
EDITING_TOOLS = frozenset({"edit", "create", "str_replace_editor", "write"})
QUESTION_TOOLS = frozenset({"ask_user"})
READING_TOOLS = frozenset({"view"})


def recognises(head: str) -> int:
    """How surely a file is of this format, from its first bytes (history/formats.py): 2,
    a sign of this format alone; 0, none."""
    first = head.lstrip().splitlines()[0] if head.strip() else ""
    return 2 if '"session.start"' in first else 0


def transcript_files(root: Path) -> list[Path]:
    return sorted((root / "session-state").glob("*/events.jsonl"))


def read(path: Path) -> Transcript | None:
    transcript: Transcript | None = None
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for _, entry in json_lines(path):
        if not isinstance(entry.get("data"), dict):
            continue
        data, kind, at = entry["data"], entry.get("type"), str(entry.get("timestamp") or "")
        if kind == "session.start":
            context = data.get("context") if isinstance(data.get("context"), dict) else {}
            transcript = Transcript(
                CLIENT,
                str(data.get("sessionId") or path.parent.name),
                str(context.get("cwd") or ""),
                path,
            )
            transcript.clues += recorded(context.get("repository"), str(entry.get("id")))
            continue
        if transcript is None:
            continue
        base = Event("start", transcript.session, CLIENT, cwd=transcript.cwd)
        if kind == "user.message":
            said = str(data.get("content") or "")
            transcript.moments.append(
                Moment(at, base.at("prompt", text=said), str(entry.get("id")))
            )
        elif kind == "tool.execution_start":
            arguments = data.get("arguments")
            calls[str(data.get("toolCallId"))] = (
                str(data.get("toolName") or ""),
                arguments if isinstance(arguments, dict) else {},
            )
        elif kind == "tool.execution_complete":
            call = str(data.get("toolCallId"))
            name, arguments = calls.get(call, ("", {}))
            result = data.get("result") if isinstance(data.get("result"), dict) else {}
            output = str(result.get("content") or data.get("error") or "")
            ok = data.get("success") is not False
            for event in _complete(transcript, base, name, arguments, output, ok, call):
                transcript.moments.append(Moment(at, event, call))
    return transcript


def _complete(
    transcript: Transcript,
    base: Event,
    name: str,
    arguments: dict[str, Any],
    output: str,
    ok: bool,
    call: str,
) -> list[Event]:
    if name in SHELL_TOOLS:
        command = str(arguments.get("command") or "")
        transcript.clues += clues_in(command, output, call)
        code = exit_code_in(output)
        return shell_call(base, command, output, code if code is not None else int(not ok))
    if name in EDITING_TOOLS:
        path = arguments.get("path") or arguments.get("file_path") or ""
        change = replaced(arguments.get("old_str"), arguments.get("new_str"))
        return [base.at("edited", path=str(path), change=change)] if ok else []
    if name in QUESTION_TOOLS:
        return [base.at("answered", text=output)] if ok else []
    if name in READING_TOOLS:
        return [base.at("read", path=str(arguments.get("path") or ""))] if ok else []
    return tool_call(base, name, arguments)
