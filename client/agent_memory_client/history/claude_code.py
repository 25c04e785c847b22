"""Claude Code's transcripts: `~/.claude/projects/<folder>/<session>.jsonl`, one JSON entry a
line (seen in 2.1's files). An entry of type `user` or `assistant` holds a `message`:

- the user's prompt: a `user` message whose content is text (a string, or `text` blocks);
  entries marked `isMeta` (hook feedback) or `isCompactSummary` are the client's own words;
- a tool call: an `assistant` message's `tool_use` block (`id`, `name`, `input`);
- its result: a later `user` message's `tool_result` block (`tool_use_id`, `is_error`,
  `content`): a Bash command failed when `is_error` is true.

Every entry carries `sessionId`, `cwd` and `timestamp`. Other entry types (attachments,
`api-request-blob` copies of requests, queue operations) are passed over."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_memory_client.clients.claude_code import EDITING_TOOLS
from agent_memory_client.history import Moment, Transcript
from agent_memory_client.loop import Event
from agent_memory_client.provenance import command_sources, tool_sources

CLIENT = "claude-code"


def default_root() -> Path:
    return Path.home() / ".claude"


def transcript_files(root: Path) -> list[Path]:
    return sorted((root / "projects").glob("*/*.jsonl"))


def read(path: Path) -> Transcript | None:
    """The session in one transcript file; None when it holds none."""
    transcript: Transcript | None = None
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            entry = _entry(line)
            if entry is None:
                continue
            if transcript is None:
                session = str(entry.get("sessionId") or path.stem)
                transcript = Transcript(CLIENT, session, str(entry.get("cwd") or ""), path)
            base = Event("start", transcript.session, CLIENT, cwd=transcript.cwd)
            at = str(entry.get("timestamp") or "")
            for event in _events(entry, base, calls):
                transcript.moments.append(Moment(at, event))
    return transcript


def _entry(line: str) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return None
    if entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    return entry if isinstance(message, dict) else None


def _events(
    entry: dict[str, Any], base: Event, calls: dict[str, tuple[str, dict[str, Any]]]
) -> Iterator[Event]:
    content = entry["message"].get("content")
    if entry["type"] == "user" and isinstance(content, str):
        yield base.at("prompt", text=content)
        return
    blocks = [b for b in content or [] if isinstance(b, dict)] if isinstance(content, list) else []
    said = [str(b.get("text") or "") for b in blocks if b.get("type") == "text"]
    if entry["type"] == "user" and said:
        yield base.at("prompt", text="\n".join(said))
    for block in blocks:
        if block.get("type") == "tool_use":
            given = block.get("input")
            calls[str(block.get("id"))] = (
                str(block.get("name") or ""),
                given if isinstance(given, dict) else {},
            )
        elif block.get("type") == "tool_result":
            tool, tool_input = calls.get(str(block.get("tool_use_id")), ("", {}))
            yield from _result(base, tool, tool_input, block)


def _result(
    base: Event, tool: str, tool_input: dict[str, Any], block: dict[str, Any]
) -> Iterator[Event]:
    failed = block.get("is_error") is True
    if tool == "Bash":
        command = str(tool_input.get("command") or "")
        yield from (base.at("fetched", sources=(s,)) for s in command_sources(command))
        if failed:
            yield base.at("failed", command=command, text=_text(block.get("content")))
        else:
            yield base.at("ran", command=command)
    elif tool in EDITING_TOOLS and not failed:
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        yield base.at("edited", path=str(path or ""))
    elif tool:
        sources = tuple(tool_sources(tool, tool_input))
        if sources:
            yield base.at("fetched", sources=sources)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return ""
