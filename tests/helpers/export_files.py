"""Export files as `POST /memories/import` reads them (NDJSON: a header line, then a line a
memory or a session)."""

from __future__ import annotations

import json
from typing import Any

NDJSON_BODY = {"Content-Type": "application/x-ndjson"}


def export_file(*records: dict[str, Any]) -> bytes:
    """The least header the import takes, then `records`."""
    header = {"format": "agent-memory/export", "version": 1}
    return b"".join(json.dumps(x).encode() + b"\n" for x in (header, *records))


def full_export_file(*lines: dict[str, Any]) -> bytes:
    """The header with every field an export writes, then `lines`."""
    header = {
        "format": "agent-memory/export",
        "version": 1,
        "tenant_id": "x",
        "source_repo": None,
        "count": len(lines),
        "embedding_model": None,
        "dimensions": None,
        "exported_at": "2026-11-25T09:00:00+00:00",
    }
    return "".join(json.dumps(x) + "\n" for x in (header, *lines)).encode()
