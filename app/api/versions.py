"""ETag / If-Match for memories: an edit based on a stale read answers 412, not a lost update."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Header

from app.domain.errors import InvalidInputError
from app.domain.memory import Memory


def etag(memory: Memory) -> str:
    return f'"v{memory.version}"'


async def expected_version(
    if_match: Annotated[str | None, Header(alias="If-Match")] = None,
) -> int | None:
    if if_match is None or if_match.strip() == "*":
        return None
    tag = if_match.strip().removeprefix("W/").strip('"')
    # ASCII digits only ("v²" is a digit to str.isdigit), and no more than a version holds.
    if not _VERSION_TAG.fullmatch(tag):
        raise InvalidInputError(
            'If-Match must be an ETag this server issued, like "v3"', field="If-Match"
        )
    return int(tag[1:])


_VERSION_TAG = re.compile(r"v[0-9]{1,9}")
