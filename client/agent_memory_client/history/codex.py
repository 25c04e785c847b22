"""Codex's sessions: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (CODEX_HOME moves
them), one `{timestamp, type, payload}` a line (seen in files of 0.125 to 0.171, the CLI's
and Codex Desktop's):

- `session_meta`: the session's `id`, `cwd`, and where recorded, `git.repository_url`
  (Desktop repeats the line: the first is taken);
- the user's prompts: `event_msg` `user_message`s; a rollout without them has its user
  `message`s in `response_item`s, the client's own context blocks left out;
- `response_item` `function_call`/`custom_tool_call` and their outputs, by `call_id`: the
  shell (`exec_command` with `cmd`, `shell` with a word list, Desktop's `shell_command`),
  `write_stdin` (more output of a command still running, with its exit status when it
  ends), `apply_patch` (a patch), a question to the user (`request_user_input`), any
  other tool (an MCP server's: provenance.py);
- `web_search_call`: a web search;
- newer rollouts' `event_msg` `item_completed`s carry the same as items: `UserMessage`,
  `CommandExecution` (`command`, `exit_code`, `aggregated_output`), `FileChange`,
  `WebSearch` (read instead of the response items where present).

An exit status is in the output's text (shell/ reads it).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_memory_client.clients.base import fetched, shell_outcome, tool_call
from agent_memory_client.clients.codex import (
    SHELL_TOOLS,
    is_patch,
    patch_change,
    patched_files,
)
from agent_memory_client.history import Moment, Transcript
from agent_memory_client.history.clues import clues_in, recorded
from agent_memory_client.history.formats import json_lines
from agent_memory_client.loop import Event
from agent_memory_client.provenance import command_sources
from agent_memory_client.shell import exit_code_in

CLIENT = "codex"
QUESTION_TOOLS = frozenset({"request_user_input", "ask_user"})
_RUNNING = re.compile(r"Process running with session ID (\d+)")
# The client's own context in a user message: AGENTS.md, the environment, instructions.
_CONTEXT = re.compile(r"^\s*(?:<|# AGENTS\.md instructions)")


def recognises(head: str) -> int:
    """How surely a file is of this format, from its first bytes (history/formats.py): 2,
    a sign of this format alone; 0, none."""
    return 2 if '"session_meta"' in head or '"response_item"' in head[:5_000] else 0


def transcript_files(root: Path) -> list[Path]:
    return sorted((root / "sessions").glob("**/rollout-*.jsonl"))


def read(path: Path) -> Transcript | None:
    entries = [(n, e) for n, e in json_lines(path) if isinstance(e.get("payload"), dict)]
    meta = next((e["payload"] for _, e in entries if e.get("type") == "session_meta"), None)
    if meta is None:
        return None
    git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
    transcript = Transcript(
        CLIENT, str(meta.get("id") or path.stem), str(meta.get("cwd") or ""), path
    )
    transcript.clues += recorded(git.get("repository_url"), "session_meta")
    base = Event("start", transcript.session, CLIENT, cwd=transcript.cwd)
    items = [(n, e) for n, e in entries if _item(e) is not None]
    read_items = _from_items if items else _from_responses
    for at, anchor, event in read_items(transcript, items or entries, base):
        transcript.moments.append(Moment(at, event, anchor))
    return transcript


def _item(entry: dict[str, Any]) -> dict[str, Any] | None:
    payload = entry["payload"]
    if entry.get("type") != "event_msg" or payload.get("type") != "item_completed":
        return None
    item = payload.get("item")
    return item if isinstance(item, dict) else None


def _from_items(
    transcript: Transcript, entries: list[tuple[int, dict[str, Any]]], base: Event
) -> Iterator[tuple[str, str, Event]]:
    for number, entry in entries:
        item, at = _item(entry) or {}, str(entry.get("timestamp") or "")
        anchor = str(item.get("id") or f"L{number}")
        kind = item.get("type")
        if kind == "UserMessage":
            said = [
                str(c.get("text") or "") for c in item.get("content") or [] if isinstance(c, dict)
            ]
            yield at, anchor, base.at("prompt", text="\n".join(said))
        elif kind == "CommandExecution":
            command = _command(item.get("command"))
            output = str(item.get("aggregated_output") or "")
            transcript.clues += clues_in(command, output, anchor)
            here = base.at(base.kind, cwd=str(item.get("cwd") or base.cwd))
            for event in fetched(here, command_sources(command), command):
                yield at, anchor, event
            code = item.get("exit_code")
            for event in _ran(here, command, code if isinstance(code, int) else None, output):
                yield at, anchor, event
        elif kind == "FileChange" and item.get("status") == "completed":
            for path in item.get("changes") or {}:
                yield at, anchor, base.at("edited", path=str(path))
        elif kind == "WebSearch":
            yield at, anchor, base.at("fetched", sources=(f"search:{item.get('query') or ''}",))


def _from_responses(
    transcript: Transcript, entries: list[tuple[int, dict[str, Any]]], base: Event
) -> Iterator[tuple[str, str, Event]]:
    calls: dict[str, tuple[str, dict[str, Any] | str]] = {}
    running: dict[str, tuple[str, str, str]] = {}  # a command still running: its session
    prompts = any(
        e.get("type") == "event_msg" and e["payload"].get("type") == "user_message"
        for _, e in entries
    )
    for number, entry in entries:
        payload, at = entry["payload"], str(entry.get("timestamp") or "")
        kind = payload.get("type")
        if entry.get("type") == "event_msg" and kind == "user_message":
            yield at, f"L{number}", base.at("prompt", text=str(payload.get("message") or ""))
            continue
        if entry.get("type") != "response_item":
            continue
        if kind == "message" and payload.get("role") == "user" and not prompts:
            said = [
                str(c.get("text") or "")
                for c in payload.get("content") or []
                if isinstance(c, dict)
            ]
            text = "\n".join(said)
            if text.strip() and not _CONTEXT.match(text):
                yield at, f"L{number}", base.at("prompt", text=text)
        elif kind == "web_search_call":
            action = payload.get("action") if isinstance(payload.get("action"), dict) else {}
            query = action.get("query") or action.get("url") or ""
            yield at, f"L{number}", base.at("fetched", sources=(f"search:{query}",))
        elif kind in ("function_call", "custom_tool_call"):
            calls[str(payload.get("call_id"))] = (
                str(payload.get("name") or ""),
                _arguments(payload),
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call = str(payload.get("call_id"))
            name, arguments = calls.get(call, ("", {}))
            text = _output_text(payload.get("output"))
            if name == "write_stdin" and isinstance(arguments, dict):
                found = running.get(str(arguments.get("session_id")))
                if found is None:
                    continue
                anchor, command, before = found
                text = before + "\n" + text
                if _RUNNING.search(text[-2_000:]) and exit_code_in(text) is None:
                    running[str(arguments.get("session_id"))] = (anchor, command, text[-20_000:])
                    continue
                running.pop(str(arguments.get("session_id")), None)
                name, arguments, call = "exec_command", {"cmd": command}, anchor
                for event in _output(transcript, base, name, arguments, text, call, running, True):
                    yield at, call, event
                continue
            for event in _output(transcript, base, name, arguments, text, call, running):
                yield at, call, event


def _output(
    transcript: Transcript,
    base: Event,
    name: str,
    arguments: dict[str, Any] | str,
    text: str,
    call: str,
    running: dict[str, tuple[str, str, str]],
    resumed: bool = False,
) -> Iterator[Event]:
    code = exit_code_in(text)
    if name == "apply_patch":
        patch = arguments if isinstance(arguments, str) else str(arguments.get("input") or "")
        if code in (None, 0):
            change = patch_change(patch)
            yield from (base.at("edited", path=p, change=change) for p in patched_files(patch))
    elif name in SHELL_TOOLS and isinstance(arguments, dict):
        command = _command(arguments.get("cmd") or arguments.get("command"))
        base = base.at(base.kind, cwd=str(arguments.get("workdir") or base.cwd))
        if is_patch(command):
            if code in (None, 0):
                change = patch_change(command)
                yield from (
                    base.at("edited", path=p, change=change) for p in patched_files(command)
                )
            return
        if not resumed:  # the read happened when it started, whatever came of it
            yield from fetched(base, command_sources(command), command)
        still = _RUNNING.search(text[-2_000:])
        if still and code is None:  # its end comes in a later write_stdin's output
            running[still.group(1)] = (call, command, text[-20_000:])
            return
        transcript.clues += clues_in(command, text, call)
        yield from _ran(base, command, code, text)
    elif name in QUESTION_TOOLS:
        yield base.at("answered", text=text)
    elif name and isinstance(arguments, dict):
        yield from tool_call(base, name, arguments)


def _ran(base: Event, command: str, code: int | None, output: str) -> Iterator[Event]:
    yield from shell_outcome(base, command, output, code)  # what it fetched: when it began


def _command(value: Any) -> str:
    """A command as the user would type it: `["bash", "-lc", "make test"]` is `make test`."""
    if isinstance(value, list):
        words = [str(w) for w in value]
        if (
            len(words) >= 3
            and os.path.basename(words[0]) in ("bash", "sh", "zsh", "pwsh", "powershell")
            and words[1] in ("-lc", "-c", "-Command")
        ):
            return words[2]
        return " ".join(words)
    return str(value or "")


def _arguments(payload: dict[str, Any]) -> dict[str, Any] | str:
    raw = payload.get("arguments", payload.get("input"))
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return raw  # a custom tool's free-form input (apply_patch's patch)
        return parsed if isinstance(parsed, dict) else raw
    return raw if isinstance(raw, dict) else {}


# What Codex writes before a command's output: its chunk, time, status and size.
_HEADER = re.compile(
    r"\A(?:(?:Chunk ID|Wall time|Process exited with code|Process running with"
    r"|Original token count|Exit code)[^\n]*\n)+(?:Output:\n)?"
)


def _output_text(output: Any) -> str:
    """A call's output as text: a JSON object with `output` and `metadata.exit_code`
    (older rollouts) is written as the newer ones write it, its status in words."""
    if isinstance(output, list):
        return "\n".join(str(o.get("text") or "") for o in output if isinstance(o, dict))
    if not isinstance(output, str):
        return ""
    try:
        parsed = json.loads(output)
    except ValueError:
        return output
    if isinstance(parsed, dict) and "output" in parsed:
        meta = parsed.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        status = f"Exit code: {code}\n" if isinstance(code, int) else ""
        return status + str(parsed.get("output") or "")
    return output
