"""A memory named by the start of its id, as a person copies it from a listing: the range
of ids it stands for. UUIDv7 ids begin with their time, so ids written within a minute
share their first 8 characters; a prefix must be long enough to tell them apart, which
only the store can say (app/services/memories.py, `by_prefix`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from uuid import UUID

from app.domain.errors import InvalidInputError

# Shorter than this matches thousands of ids at once: refused before any read.
MIN_PREFIX_DIGITS = 6
# A whole id as a listing prints it (32 hex digits and 4 dashes): no prefix is longer.
MAX_PREFIX_CHARS = 36
# Hex digits, any case, dashes anywhere (as a listing prints an id, or not).
ID_PREFIX_PATTERN = rf"^-*(?:[0-9a-fA-F]-*){{{MIN_PREFIX_DIGITS},32}}$"
_PREFIX = re.compile(ID_PREFIX_PATTERN)


@dataclass(frozen=True, slots=True)
class IdPrefix:
    text: str  # as given, for messages
    low: UUID  # the first id it stands for
    high: UUID  # the last


def id_prefix(text: str) -> IdPrefix:
    """The ids starting with `text` (hex digits, dashes where a UUID has them, any case)."""
    if len(text.strip()) > MAX_PREFIX_CHARS or not _PREFIX.match(text.strip()):
        raise InvalidInputError(
            f"an id or its first {MIN_PREFIX_DIGITS} or more hex digits, as listed"
            " (0193c0de-5a1e, say)",
            field="prefix",
        )
    digits = text.strip().lower().replace("-", "")
    return IdPrefix(text.strip(), UUID(digits.ljust(32, "0")), UUID(digits.ljust(32, "f")))
