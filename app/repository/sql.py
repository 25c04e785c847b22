"""SQL that binds by name: `:name` placeholders turned into asyncpg's `$n`.

A statement written with names cannot have two values swapped by position, and reads the
same in psql (`\\set name ...`, then `:'name'`). Comments, quoted literals and `::` casts
are left as they are.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from numbers import Real
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


def sql_literal(value: Any) -> str:
    """A value as SQL literal text (for psql's `:name`, or a statement written with its
    values in, as the Citus tests EXPLAIN them): NULL, a boolean, a number, or a quoted
    literal (a list as an array or a vector, by what the statement casts it to). Quotes are
    doubled, which is all a literal needs with standard_conforming_strings (on since
    PostgreSQL 9.1)."""
    text = sql_text(value)
    if text is None:
        return "NULL"
    if isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
        return text
    return "'" + text.replace("'", "''") + "'"


def sql_text(value: Any) -> str | None:
    """A value as the text its SQL type reads (None for NULL): a boolean, a number, a dict
    as jsonb, a list as an array or a vector (by what the statement casts it to)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return json.dumps(value)  # jsonb
    if isinstance(value, list | tuple) or hasattr(value, "tolist"):  # numpy's too
        if len(value) and all(isinstance(v, Real) and not isinstance(v, bool) for v in value):
            return "[" + ",".join(repr(float(v)) for v in value) + "]"  # a vector
        return "{" + ",".join("NULL" if v is None else _array_element(str(v)) for v in value) + "}"
    return str(value)


def _array_element(text: str) -> str:
    """One element of an array literal: quoted, its backslashes and quotes escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def psql_script(sql: str, values: Mapping[str, Any]) -> str:
    """The statement as psql runs it: a `\\set` for each value, then the text as written
    (psql puts each value where its `:name` stands)."""
    _, order = _compile(sql)
    sets = []
    for name in dict.fromkeys(order):
        literal = sql_literal(values[name])
        # psql's \set reads a quoted argument with '' for a quote, as SQL does, and C-like
        # escapes: a backslash is written twice, a line's end as \n (\set takes one line).
        escaped = literal.replace("\\", "\\\\").replace("\n", "\\n").replace("'", "''")
        sets.append(f"\\set {name} '{escaped}'")
    return "\n".join([*sets, sql.strip() + ";"])


def hnsw_index(column: str) -> str:
    """An HNSW graph over `column`, as the tenant's (migration 0004): the re-embed's next
    column's, and a repository's own (app/repository/graphs.py)."""
    return f"USING hnsw ({column} vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
