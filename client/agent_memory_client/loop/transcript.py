"""The agent's own words in a Claude-style transcript (JSON lines), read from the file's
tail: a long session costs what a short one does."""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any

SUMMARY_CHARS = 2_000
TRANSCRIPT_TAIL_BYTES = 256 * 1024


def assistant_turns(transcript_path: str | None) -> list[list[dict[str, Any]]]:
    """The agent's messages in a Claude-style transcript (JSON lines), newest first, each
    as its content blocks: read from the file's tail, so a long session costs what a short
    one does."""
    if not transcript_path:
        return []
    try:
        with open(transcript_path, "rb") as transcript:
            transcript.seek(0, os.SEEK_END)
            transcript.seek(max(0, transcript.tell() - TRANSCRIPT_TAIL_BYTES))
            lines = transcript.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    turns = []
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        turns.append([b for b in blocks or [] if isinstance(b, dict)])
    return turns


def last_assistant_text(transcript_path: str | None) -> str | None:
    """The agent's last words in the transcript, as its report of the session."""
    for blocks in assistant_turns(transcript_path):
        text = " ".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        if text.strip():
            return text.strip()[:SUMMARY_CHARS]
    return None
