"""SQL bound by name: what `named()` turns into asyncpg's `$n`, and what it leaves; and the
literals `sql_literal()` writes for psql and for the Citus tests' EXPLAIN."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg
import numpy as np
import pytest

from app.repository.sql import named, sql_literal


def test_names_become_numbers_in_first_use_order() -> None:
    text, *values = named("SELECT :b, :a::int, :b FROM t WHERE x = :a", {"a": 1, "b": "two"})
    assert text == "SELECT $1, $2::int, $1 FROM t WHERE x = $2"
    assert values == ["two", 1]


def test_casts_literals_and_comments_are_left_alone() -> None:
    sql = (
        "SELECT 'a:b'::text, ':not_a_name', x::jsonb -- the row's :not_this either\n"
        "FROM t WHERE y = :y"
    )
    text, *values = named(sql, {"y": 3})
    assert text.endswith("WHERE y = $1") and "':not_a_name'" in text
    assert "-- the row's :not_this either" in text and values == [3]


def test_a_missing_or_unused_value_is_an_error() -> None:
    with pytest.raises(KeyError, match="missing \\['b'\\]"):
        named("SELECT :a, :b", {"a": 1})
    with pytest.raises(KeyError, match="unused \\['c'\\]"):
        named("SELECT :a", {"a": 1, "c": 2})


async def test_values_written_in_read_back_as_bound(db: asyncpg.Connection) -> None:
    """Each value written as a literal reads back as the same value: quotes, backslashes
    and braces in text and in arrays, a vector of numpy's floats, NULL (alone and in an
    array), a time."""
    values = {
        "text": 'it\'s a \\path\\ {with} "quotes"\nand a line',
        "tags": ['a"b', "c\\d", "e'f", "{}", "NULL", None],
        "vector": np.array([0.25, -1.5, 3.0], dtype=np.float32),
        "none": None,
        "count": 7,
        "when": datetime(2026, 11, 27, 4, 5, 6, tzinfo=UTC),
    }
    casts = {"text": "text", "tags": "text[]", "vector": "vector::text", "none": "text"}
    casts |= {"count": "int", "when": "timestamptz"}
    columns = ", ".join(f"{sql_literal(values[n])}::{cast} AS {n}" for n, cast in casts.items())
    row = await db.fetchrow(f"SELECT {columns}".replace("AS vector", "AS vector_value"))
    assert dict(row) == {
        **{name: values[name] for name in ("text", "tags", "none", "count", "when")},
        "vector_value": "[0.25,-1.5,3]",
    }
