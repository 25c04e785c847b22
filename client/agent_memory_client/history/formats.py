"""Which client wrote a transcript file, from its first bytes, and its reader: for
`import-history --file` and the benchmark (bench/capture.py), which meet files of every
client. A `.gz` file is read through gzip."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from agent_memory_client.history import Transcript

HEAD_BYTES = 65_536


def open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return path.open(encoding="utf-8", errors="replace")


def json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """A JSON Lines file's objects, each with its line's number (the anchor a moment without
    an id of its own gets); a line that is no JSON object is passed over."""
    with open_text(path) as lines:
        for number, line in enumerate(lines, start=1):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                yield number, entry


def content_text(content: Any) -> str:
    """A message's text: a string, or the `text` of each block of a list (Claude Code's,
    Gemini CLI's and Cursor's messages alike)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return ""


def whole_text(path: Path) -> str:
    with open_text(path) as file:
        return file.read()


def client_of(path: Path) -> str | None:
    """The client whose format the file is in; None for an unknown one."""
    with open_text(path) as file:
        head = file.read(HEAD_BYTES)
    first = head.lstrip().splitlines()[0] if head.strip() else ""
    if '"session_meta"' in head or '"response_item"' in head[:5_000]:
        return "codex"
    if '"session.start"' in first:
        return "copilot-cli"
    if first.startswith('{"role"'):
        return "cursor"
    if '"projectHash"' in head[:2_000]:
        return "gemini-cli"
    if head.lstrip().startswith("{") and '"info"' in head[:400] and '"messages"' in head:
        return "opencode"
    if '"sessionId"' in head or '"type":"user"' in head or '"parentUuid"' in head:
        return "claude-code"
    return None


def reader_of(client: str) -> Callable[[Path], Transcript | None]:
    from agent_memory_client.history import claude_code, codex, copilot, cursor, gemini, opencode

    readers: dict[str, Callable[[Path], Transcript | None]] = {
        "claude-code": claude_code.read,
        "codex": codex.read,
        "gemini-cli": gemini.read,
        "copilot-cli": copilot.read,
        "opencode": opencode.read,
        "cursor": cursor.read,
    }
    return readers[client]


def read_any(path: Path) -> Transcript | None:
    client = client_of(path)
    return reader_of(client)(path) if client else None
