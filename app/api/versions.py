"""ETag / If-Match for memories: an edit based on a stale read answers 412, not a lost update."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Header

from app.domain.errors import InvalidInputError
from app.domain.memory import Memory
from app.domain.text import PATTERN_END


def etag(memory: Memory) -> str:
    return f'"v{memory.version}"'


# "*", or an ETag this server issued ("v3", weak or not), around white space. A version
# is ASCII digits ("v²" is a digit to str.isdigit), no more than a version holds.
IF_MATCH_PATTERN = r'^\s*(?:\*|(?:W/)?"*v([0-9]{1,9})"*)\s*' + PATTERN_END


async def expected_version(
    if_match: Annotated[
        str | None,
        # Optional, but never null: a header is text or absent.
        Header(
            alias="If-Match",
            json_schema_extra={"anyOf": [{"type": "string", "pattern": IF_MATCH_PATTERN}]},
        ),
    ] = None,
) -> int | None:
    if if_match is None:
        return None
    matched = re.fullmatch(IF_MATCH_PATTERN, if_match)
    if matched is None:
        raise InvalidInputError(
            'If-Match must be an ETag this server issued, like "v3"', field="If-Match"
        )
    return int(matched.group(1)) if matched.group(1) else None
