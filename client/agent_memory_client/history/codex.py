"""Codex CLI's sessions: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (CODEX_HOME moves
them), one `{timestamp, type, payload}` a line (seen in 0.171's files):

- `session_meta`: the session's `id`, `cwd`, and where recorded, `git.repository_url`;
- `event_msg` whose payload is `item_completed`: the session's items as they ended:
  `UserMessage` (the user's prompt), `CommandExecution` (`command`, `exit_code`,
  `aggregated_output`), `FileChange` (`changes`, keyed by path), `HookPrompt` (a hook's
  words: passed over);
- older rollouts carry no such items: their `response_item`s are read instead, a
  `function_call` (`shell`, `exec_command`: its command; `apply_patch`: its patch) and its
  `function_call_output` (the exit code in its text or metadata), and the user's `message`s.

A command failed when its exit code is not 0: the file records it, where the live hook
reads it from the output."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_memory_client.clients.codex import SHELL_TOOLS, is_patch, patched_files
from agent_memory_client.history import Moment, Transcript
from agent_memory_client.loop import Event
from agent_memory_client.provenance import command_sources, tool_sources

CLIENT = "codex"
_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")


def default_root() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def transcript_files(root: Path) -> list[Path]:
    return sorted((root / "sessions").glob("**/rollout-*.jsonl"))


def read(path: Path) -> Transcript | None:
    lines = []
    with path.open(encoding="utf-8", errors="replace") as file:
        for line in file:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("payload"), dict):
                lines.append(entry)
    meta = next((e["payload"] for e in lines if e.get("type") == "session_meta"), None)
    if meta is None:
        return None
    git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
    transcript = Transcript(
        CLIENT, str(meta.get("id") or path.stem), str(meta.get("cwd") or ""), path,
        remote=str(git.get("repository_url") or "") or None,
    )  # fmt: skip
    base = Event("start", transcript.session, CLIENT, cwd=transcript.cwd)
    items = [e for e in lines if _item(e) is not None]
    read_items = _from_items if items else _from_responses
    for at, event in read_items(items or lines, base):
        transcript.moments.append(Moment(at, event))
    return transcript


def _item(entry: dict[str, Any]) -> dict[str, Any] | None:
    payload = entry["payload"]
    if entry.get("type") != "event_msg" or payload.get("type") != "item_completed":
        return None
    item = payload.get("item")
    return item if isinstance(item, dict) else None


def _from_items(entries: list[dict[str, Any]], base: Event) -> Iterator[tuple[str, Event]]:
    for entry in entries:
        item, at = _item(entry) or {}, str(entry.get("timestamp") or "")
        kind = item.get("type")
        if kind == "UserMessage":
            said = [
                str(c.get("text") or "") for c in item.get("content") or [] if isinstance(c, dict)
            ]
            yield at, base.at("prompt", text="\n".join(said))
        elif kind == "CommandExecution":
            command = _command(item.get("command"))
            for event in _ran(base, command, item.get("exit_code"), item.get("aggregated_output")):
                yield at, event
        elif kind == "FileChange" and item.get("status") == "completed":
            for path in item.get("changes") or {}:
                yield at, base.at("edited", path=str(path))
        elif kind == "WebSearch":
            yield at, base.at("fetched", sources=(f"search:{item.get('query') or ''}",))


def _from_responses(entries: list[dict[str, Any]], base: Event) -> Iterator[tuple[str, Event]]:
    calls: dict[str, tuple[str, dict[str, Any] | str]] = {}
    for entry in entries:
        payload, at = entry["payload"], str(entry.get("timestamp") or "")
        if entry.get("type") != "response_item":
            continue
        kind = payload.get("type")
        if kind == "message" and payload.get("role") == "user":
            said = [
                str(c.get("text") or "")
                for c in payload.get("content") or []
                if isinstance(c, dict)
            ]
            text = "\n".join(said)
            if not text.lstrip().startswith("<"):  # the client's own context blocks
                yield at, base.at("prompt", text=text)
        elif kind in ("function_call", "custom_tool_call"):
            calls[str(payload.get("call_id"))] = (
                str(payload.get("name") or ""),
                _arguments(payload),
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            name, arguments = calls.get(str(payload.get("call_id")), ("", {}))
            output = payload.get("output")
            for event in _output(base, name, arguments, output):
                yield at, event


def _output(
    base: Event, name: str, arguments: dict[str, Any] | str, output: Any
) -> Iterator[Event]:
    text, code = _output_text(output)
    if name == "apply_patch":
        patch = arguments if isinstance(arguments, str) else str(arguments.get("input") or "")
        if code in (None, 0):
            yield from (base.at("edited", path=p) for p in patched_files(patch))
    elif name in SHELL_TOOLS and isinstance(arguments, dict):
        command = _command(arguments.get("command") or arguments.get("cmd"))
        if is_patch(command):
            if code in (None, 0):
                yield from (base.at("edited", path=p) for p in patched_files(command))
            return
        yield from _ran(base, command, code, text)
    elif name and isinstance(arguments, dict):
        sources = tuple(tool_sources(name, arguments))
        if sources:
            yield base.at("fetched", sources=sources)


def _ran(base: Event, command: str, code: Any, output: Any) -> Iterator[Event]:
    yield from (base.at("fetched", sources=(s,)) for s in command_sources(command))
    if isinstance(code, int) and code != 0:
        yield base.at("failed", command=command, text=str(output or ""))
    elif code == 0:
        yield base.at("ran", command=command)


def _command(value: Any) -> str:
    """A command as the user would type it: `["bash", "-lc", "make test"]` is `make test`."""
    if isinstance(value, list):
        words = [str(w) for w in value]
        if (
            len(words) >= 3
            and os.path.basename(words[0]) in ("bash", "sh", "zsh")
            and words[1] in ("-lc", "-c")
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


def _output_text(output: Any) -> tuple[str, int | None]:
    """(text, exit code) of a call's output: a JSON object with `output` and
    `metadata.exit_code` (older), or text naming its exit code (newer)."""
    if isinstance(output, str):
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            meta = parsed.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            return str(parsed.get("output") or ""), code if isinstance(code, int) else None
        found = _EXIT.search(output)
        return output, int(found.group(1)) if found else None
    return "", None
