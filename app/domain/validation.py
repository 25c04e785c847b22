"""Input rules every writer obeys, whatever the transport (REST, MCP, CLI)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from app.domain.errors import InvalidInputError

# NUL cannot be stored in PostgreSQL text; other C0 controls (but tab, LF, CR) and DEL
# have no business in a memory and can hide instructions from a reader.
_FORBIDDEN_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Limits:
    max_content_chars: int
    max_tags: int
    max_tag_chars: int
    max_metadata_bytes: int
    max_metadata_depth: int = 8
    max_context_chars: int = 4_000


def clean_text(value: str, field: str, *, max_chars: int | None = None) -> str:
    if _FORBIDDEN_CONTROL.search(value):
        raise InvalidInputError(f"{field} contains control characters", field=field)
    value = value.strip()
    if max_chars is not None and len(value) > max_chars:
        raise InvalidInputError(
            f"{field} is {len(value)} characters; the limit is {max_chars}", field=field
        )
    return value


def clean_content(content: str, limits: Limits, field: str = "content") -> str:
    content = clean_text(content, field, max_chars=limits.max_content_chars)
    if not content:
        raise InvalidInputError(f"{field} must not be empty", field=field)
    return content


def clean_context(context: str | None, limits: Limits, field: str = "context") -> str | None:
    """A memory's context, or None when there is none (absent or blank)."""
    if context is None:
        return None
    return clean_text(context, field, max_chars=limits.max_context_chars) or None


def clean_tags(tags: list[str], limits: Limits) -> tuple[str, ...]:
    if len(tags) > limits.max_tags:
        raise InvalidInputError(f"at most {limits.max_tags} tags are allowed", field="tags")
    seen: dict[str, None] = {}
    for tag in tags:
        tag = clean_text(tag, "tags", max_chars=limits.max_tag_chars)
        if tag:
            seen.setdefault(tag, None)
    return tuple(seen)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def clean_metadata(metadata: dict[str, Any], limits: Limits) -> dict[str, Any]:
    encoded = json.dumps(metadata, ensure_ascii=False)
    if "\\u0000" in encoded:
        raise InvalidInputError("metadata contains NUL characters", field="metadata")
    if len(encoded.encode()) > limits.max_metadata_bytes:
        raise InvalidInputError(
            f"metadata is larger than {limits.max_metadata_bytes} bytes", field="metadata"
        )
    if _depth(metadata) > limits.max_metadata_depth:
        raise InvalidInputError(
            f"metadata nests deeper than {limits.max_metadata_depth} levels", field="metadata"
        )
    return metadata
