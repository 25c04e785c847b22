"""Cursor's agent transcripts (`transcript_path` in its hooks: JSON lines of `role` and
`message.content`, text only, no tool records). Only the user's words are read: a rule
they state; pasted web results the client injects (`<external_links>`) are an outsider's
text, so the session is recorded as having read them."""

from __future__ import annotations

import re
from pathlib import Path

from agent_memory_client.history import Moment, Transcript
from agent_memory_client.history.formats import content_text, json_lines
from agent_memory_client.loop import Event

CLIENT = "cursor"
_INJECTED = re.compile(r"<external_links>.*?</external_links>", re.DOTALL)
_URL = re.compile(r"Website URL:\s*(\S+)")


def recognises(head: str) -> int:
    """How surely a file is of this format, from its first bytes (history/formats.py): 2,
    a sign of this format alone; 0, none."""
    return 2 if head.lstrip().startswith('{"role"') else 0


def read(path: Path) -> Transcript | None:
    transcript = Transcript(CLIENT, path.stem, "", path)
    base = Event("start", transcript.session, CLIENT)
    for number, entry in json_lines(path):
        if entry.get("role") != "user":
            continue
        content = (entry.get("message") or {}).get("content")
        text = content_text(content)
        injected = _INJECTED.findall(text)
        anchor = f"L{number}"
        if injected:
            urls = tuple(u for block in injected for u in _URL.findall(block))[:10]
            transcript.moments.append(
                Moment("", base.at("fetched", sources=urls or ("injected web results",)), anchor)
            )
        said = _INJECTED.sub("", text).strip()
        if said:
            transcript.moments.append(Moment("", base.at("prompt", text=said), anchor))
    return transcript if transcript.moments else None
