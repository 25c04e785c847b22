"""Which client wrote a transcript file, from its first bytes (each reader's `recognises`),
and its reader (each client's adapter names it): for `import-history --file` and the
benchmark (bench/capture.py), which meet files of every client. A `.gz` file is read
through gzip. And what several readers share: JSON Lines, a message's text."""

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
    """The client whose format the file is in: the reader that recognises its first bytes
    most surely (each reader's `recognises`); None for an unknown one."""
    from agent_memory_client.clients import ADAPTERS

    with open_text(path) as file:
        head = file.read(HEAD_BYTES)
    sureness = {adapter.name: adapter.reading().recognises(head) for adapter in ADAPTERS}
    best = max(sureness, key=lambda name: sureness[name])
    return best if sureness[best] else None


def reader_of(client: str) -> Callable[[Path], Transcript | None]:
    """The reader of `client`'s transcripts (by its name or alias)."""
    from agent_memory_client.clients import named

    read: Callable[[Path], Transcript | None] = named(client).reading().read
    return read


def read_any(path: Path) -> Transcript | None:
    client = client_of(path)
    return reader_of(client)(path) if client else None
