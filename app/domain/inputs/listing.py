"""A list of memories a page at a time: its filter, its page size, and the cursor that
says where the next page starts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from uuid import UUID

from app.domain.errors import InvalidInputError
from app.domain.filters import FilterRequest, MemoryFilter, memory_filter
from app.domain.text import PATTERN_END
from app.domain.validation import Limits


@dataclass(frozen=True, slots=True)
class ListRequest:
    filter: FilterRequest = field(default_factory=FilterRequest)
    limit: int = 50
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class ListQuery:
    filter: MemoryFilter
    limit: int
    after: tuple[datetime, UUID] | None


MAX_LIST_LIMIT = 200


# A page's position: the last row's creation time (microseconds since the epoch) and id;
# empty for the first page. Every string of this form is a position (a page after it,
# maybe empty), so the pattern is the whole rule.
CURSOR_PATTERN = r"^(?:([0-9]{1,17})\.([0-9a-f]{32}))?" + PATTERN_END
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def encode_cursor(created_at: datetime, memory_id: UUID) -> str:
    micros = (created_at - _EPOCH) // timedelta(microseconds=1)
    return f"{micros}.{memory_id.hex}"


def decode_cursor(cursor: str) -> tuple[datetime, UUID] | None:
    matched = re.fullmatch(CURSOR_PATTERN, cursor)
    if matched is None:
        raise InvalidInputError("cursor is not one this server issued", field="cursor")
    micros, memory_id = matched.groups()
    if micros is None:
        return None
    return _EPOCH + timedelta(microseconds=int(micros)), UUID(hex=memory_id)


def list_query(request: ListRequest, limits: Limits) -> ListQuery:
    limit = request.limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidInputError(f"limit must be 1 to {MAX_LIST_LIMIT}", field="limit")
    return ListQuery(
        filter=memory_filter(request.filter, limits),
        limit=limit,
        after=None if request.cursor is None else decode_cursor(request.cursor),
    )
