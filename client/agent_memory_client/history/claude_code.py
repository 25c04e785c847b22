"""Claude Code's transcripts: `~/.claude/projects/<folder>/<session>.jsonl`, one JSON entry a
line (seen in files of 2.1.7 to 2.1.332). An entry of type `user` or `assistant` holds a
`message`:

- the user's prompt: a `user` message whose content is text (a string, or `text` blocks);
  entries marked `isMeta` (hook feedback) or `isCompactSummary`, and blocks that are the
  client's own context (`<system-reminder>`, `<ide_opened_file>`, a teammate's message in an
  agent team), are not the user's words;
- a tool call: an `assistant` message's `tool_use` block (`id`, `name`, `input`);
- its result: a later `user` message's `tool_result` block (`tool_use_id`, `is_error`,
  `content`); a shell command (`Bash`, `PowerShell`) failed when `is_error` is true, or when
  a pipe hid a failure its output shows (shell/); a cancelled call is neither;
- a subagent's calls: in `progress` entries (`data.message`, 2.1.x until about 2.1.100,
  `parentToolUseID` the call that started it), or in the session's own folder
  (`<session>/subagents/agent-<agentId>.jsonl`, later versions); a background agent's are
  often in neither (its report comes back as a `<task-notification>`), and its brief says
  what it was sent to read (provenance.brief_sources());
- `pr-link` entries: the pull request a session opened, with its repository.

Every entry carries `sessionId`, `cwd` and `timestamp`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_memory_client.clients.base import change_of, shell_call, tool_call
from agent_memory_client.clients.claude_code import (
    EDITING_TOOLS,
    SEARCH_TOOL,
    SHELL_TOOLS,
    searched,
)
from agent_memory_client.history import Moment, Transcript
from agent_memory_client.history.clues import clues_in, pr_link
from agent_memory_client.history.formats import content_text, json_lines
from agent_memory_client.loop import Event
from agent_memory_client.provenance import brief_sources

CLIENT = "claude-code"
QUESTION_TOOL = "AskUserQuestion"
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})  # its name before 2.1.x, and since
# A subagent's id, in the result of the call that started it.
_AGENT_ID = re.compile(r"\bagentId: (\w+)")
# Text blocks of a user message that are the client's context, not the user's words.
_CONTEXT = re.compile(
    r"^\s*<(?:system-reminder|ide_opened_file|ide_selection|ide_diagnostics|command-name"
    r"|command-message|command-args|local-command-stdout|local-command-stderr|user-memory-input"
    r"|teammate-message|task-notification|bash-input|bash-stdout|bash-stderr)\b"
    r"|^\s*\[Request interrupted|^\s*Caveat: The messages below|^\s*Base directory for this skill"
    r"|^\s*Implement the following plan:",  # plan mode's hand-over: the agent's own plan
)


# A refused call's result, with what the user said to do instead.
_REJECTED = re.compile(r"tool use was rejected.*?the user said:\s*(.+)", re.DOTALL | re.IGNORECASE)


def recognises(head: str) -> int:
    """How surely a file is of this format, from its first bytes (history/formats.py): 1,
    a sign that others' files may carry too (a `sessionId`); 0, none."""
    return 1 if '"sessionId"' in head or '"type":"user"' in head or '"parentUuid"' in head else 0


def transcript_files(root: Path) -> list[Path]:
    return sorted((root / "projects").glob("*/*.jsonl"))


class _Reading:
    """One transcript being read: the calls awaiting their results, the moments so far, the
    folder the session is in (its entries say, as `cd` moves it), and which subagents' own
    calls the transcript holds (by the call that started them, by their agent ids)."""

    def __init__(self, transcript: Transcript, agents: set[str]) -> None:
        self.transcript = transcript
        self.base = Event("start", transcript.session, CLIENT, cwd=transcript.cwd)
        self.here = self.base
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self.agents = agents  # subagents whose files are beside the transcript
        self.delegated: set[str] = set()  # calls whose subagent's calls came as progress
        # Calls that started a subagent, where their results came (a background agent's
        # calls may come after it): (place in the moments, call, when, its input, its ids).
        self.started: list[tuple[int, str, str, dict[str, Any], list[str], bool]] = []

    def add(self, at: str, event: Event, anchor: str, sub: bool) -> None:
        self.transcript.moments.append(Moment(at, event, anchor, sub))

    def moved(self, entry: dict[str, Any]) -> None:
        """The folder an entry says the session is in, for the calls it records."""
        cwd = str(entry.get("cwd") or self.base.cwd)
        if cwd != self.here.cwd:
            self.here = self.base.at("start", cwd=cwd)


def read(path: Path) -> Transcript | None:
    """The session in one transcript file (with its subagents' files); None when it holds
    none."""
    reading: _Reading | None = None
    subagents = sorted((path.parent / path.stem / "subagents").glob("*.jsonl"))
    agents = {file.stem.removeprefix("agent-") for file in subagents}
    for number, entry in json_lines(path):
        if reading is None:
            if "sessionId" not in entry:
                continue
            session = str(entry.get("sessionId") or path.stem)
            reading = _Reading(Transcript(CLIENT, session, "", path), agents)
        if not reading.transcript.cwd and entry.get("cwd"):  # the first entry that says
            reading.transcript.cwd = str(entry["cwd"])
            reading.base = reading.base.at("start", cwd=reading.transcript.cwd)
        reading.moved(entry)
        _read_entry(reading, entry, number, sub=bool(entry.get("isSidechain")))
    if reading is None:
        return None
    for subagent in subagents:
        for number, entry in json_lines(subagent):
            reading.moved(entry)
            _read_entry(reading, entry, number, sub=True)
    _reports(reading)
    return reading.transcript


def _read_entry(reading: _Reading, entry: dict[str, Any], number: int, sub: bool) -> None:
    kind = entry.get("type")
    at = str(entry.get("timestamp") or "")
    queued = _queued(entry)
    if queued is not None:  # typed while the agent worked
        anchor = str(entry.get("uuid") or f"L{number}")
        if queued.strip() and not _CONTEXT.match(queued):
            reading.add(at, reading.base.at("prompt", text=queued), anchor, sub)
        return
    if kind == "pr-link":
        found = pr_link(entry.get("prRepository"), entry.get("prUrl"), f"L{number}")
        reading.transcript.clues += found
        return
    data = entry.get("data")
    if kind == "progress" and isinstance(data, dict) and isinstance(data.get("message"), dict):
        reading.delegated.add(str(entry.get("parentToolUseID")))
        inner = data["message"]  # a subagent's message, as it went
        if isinstance(inner.get("message"), dict):
            nested = {
                "type": inner.get("type"),
                "message": inner["message"],
                "uuid": inner.get("uuid"),
            }
            _read_message(reading, nested, at, number, sub=True)
        return
    if kind not in ("user", "assistant") or not isinstance(entry.get("message"), dict):
        return
    if entry.get("isMeta") or entry.get("isCompactSummary"):
        return
    _read_message(reading, entry, at, number, sub)


def _queued(entry: dict[str, Any]) -> str | None:
    """A prompt the user typed while the agent worked: a queue operation's text (not a
    background task's JSON), or a `queued_command` attachment's."""
    if entry.get("type") == "queue-operation" and entry.get("operation") == "enqueue":
        content = entry.get("content")
        if isinstance(content, str) and content.strip() and not content.lstrip().startswith("{"):
            return content
        return ""
    attachment = entry.get("attachment")
    if entry.get("type") == "attachment" and isinstance(attachment, dict):
        if attachment.get("type") == "queued_command" and isinstance(attachment.get("prompt"), str):
            return str(attachment["prompt"])
        return ""
    return None


def _read_message(
    reading: _Reading, entry: dict[str, Any], at: str, number: int, sub: bool
) -> None:
    content = entry["message"].get("content")
    anchor = str(entry.get("uuid") or f"L{number}")
    user = entry.get("type") == "user"
    if user and isinstance(content, str):
        if not sub and not _CONTEXT.match(content):
            reading.add(at, reading.base.at("prompt", text=content), anchor, sub)
        return
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    said = [str(b.get("text") or "") for b in blocks if b.get("type") == "text"]
    said = [text for text in said if text.strip() and not _CONTEXT.match(text)]
    if user and said and not sub:
        reading.add(at, reading.base.at("prompt", text="\n".join(said)), anchor, sub)
    for block in blocks:
        if block.get("type") == "tool_use":
            given = block.get("input")
            reading.calls[str(block.get("id"))] = (
                str(block.get("name") or ""),
                given if isinstance(given, dict) else {},
            )
        elif block.get("type") == "tool_result":
            call = str(block.get("tool_use_id"))
            tool, tool_input = reading.calls.get(call, ("", {}))
            if tool in SHELL_TOOLS:
                command = str(tool_input.get("command") or "")
                reading.transcript.clues += clues_in(
                    command, content_text(block.get("content")), call
                )
            if tool in SUBAGENT_TOOLS:
                ids = _AGENT_ID.findall(content_text(block.get("content")))
                place = len(reading.transcript.moments)
                reading.started.append((place, call, at, tool_input, ids, sub))
            for event in _result(reading.here, tool, tool_input, block):
                reading.add(at, event, call, sub)


def _reports(reading: _Reading) -> None:
    """Each subagent's report whose calls the transcript does not hold (neither as progress
    entries nor in a file of its own), read by its brief, where its result came."""
    for place, call, at, tool_input, ids, sub in reversed(reading.started):
        if call in reading.delegated or reading.agents.intersection(ids):
            continue  # its own calls say what it read
        brief, title = str(tool_input.get("prompt") or ""), str(tool_input.get("description") or "")
        sources = tuple(brief_sources(brief, title))
        if sources:
            event = reading.base.at("fetched", sources=sources)
            reading.transcript.moments.insert(place, Moment(at, event, call, sub))


def _result(
    base: Event, tool: str, tool_input: dict[str, Any], block: dict[str, Any]
) -> Iterator[Event]:
    output = content_text(block.get("content"))
    error = block.get("is_error") is True
    said = _REJECTED.search(output) if error else None
    if said:  # the user refused the call, and said why: their own words
        refused = f"(refusing {tool} {json.dumps(tool_input)[:120]})"
        yield base.at("answered", text=f"{said.group(1).strip()}\n\n{refused}")
        return
    if tool in SHELL_TOOLS:
        yield from shell_call(base, str(tool_input.get("command") or ""), output, int(error))
    elif tool in EDITING_TOOLS:
        if not error:
            path = tool_input.get("file_path") or tool_input.get("notebook_path")
            yield base.at("edited", path=str(path or ""), change=change_of(tool_input))
    elif tool == QUESTION_TOOL:
        if not error:
            yield base.at("answered", text=output)
    elif tool == "Read":
        yield base.at("read", path=str(tool_input.get("file_path") or ""))
    elif tool == SEARCH_TOOL:
        yield from searched(base, tool_input)
    elif tool:
        yield from tool_call(base, tool, tool_input)
