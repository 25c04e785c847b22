"""SQL that binds by name: `:name` placeholders turned into asyncpg's `$n`.

A statement written with names cannot have two values swapped by position, and reads the
same in psql (`\\set name ...`, then `:'name'`). Comments, quoted literals and `::` casts
are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

# Comments and quoted literals are passed over whole (an apostrophe in a comment is no
# quote); then each `:name` that is not the second half of a `::` cast.
_TOKEN = re.compile(r"--[^\n]*|'(?:[^']|'')*'|(?<![:\w]):([a-z_][a-z0-9_]*)")


@lru_cache(maxsize=512)
def _compile(sql: str) -> tuple[str, tuple[str, ...]]:
    order: list[str] = []

    def number(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return match.group(0)
        if name not in order:
            order.append(name)
        return f"${order.index(name) + 1}"

    return _TOKEN.sub(number, sql), tuple(order)


def named(sql: str, values: Mapping[str, Any]) -> tuple[Any, ...]:
    """The statement with `$n` for each `:name`, then the values in that order, ready for
    `conn.fetch(*named(sql, values))`. A name the statement uses and `values` lacks is an
    error; so is a value the statement never uses."""
    text, order = _compile(sql)
    missing = [name for name in order if name not in values]
    unused = sorted(set(values) - set(order))
    if missing or unused:
        raise KeyError(f"SQL parameters missing {missing} or unused {unused}")
    return (text, *(values[name] for name in order))
