"""SQL bound by name: what `named()` turns into asyncpg's `$n`, and what it leaves; and what
`inlined()` writes in."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg
import numpy as np
import pytest

from app.repository.sql import inlined, named


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
    """`inlined` (the statement a Citus search runs on the worker) writes each value as a
    literal that PostgreSQL reads back as the same value: quotes, backslashes and braces in
    text and in arrays, a vector of numpy's floats, NULL; a name kept as a parameter is left
    to the statement's caller."""
    values = {
        "text": 'it\'s a \\path\\ {with} "quotes"\nand a line',
        "tags": ['a"b', "c\\d", "e'f", "{}", "NULL"],
        "vector": np.array([0.25, -1.5, 3.0], dtype=np.float32),
        "none": None,
        "count": 7,
        "when": datetime(2026, 11, 27, 4, 5, 6, tzinfo=UTC),
    }
    sql = (
        "SELECT :text::text AS text, :tags::text[] AS tags, :vector::vector::text AS vector,"
        " :none::text AS none, :count::int AS count, :when::timestamptz AS when,"
        " :kept::jsonb AS kept -- :not_this"
    )
    statement = inlined(sql, values, parameters=("kept",))
    assert "$1::jsonb" in statement and "-- :not_this" in statement
    row = await db.fetchrow(statement, '{"given": true}')
    assert dict(row) == {
        "text": values["text"],
        "tags": values["tags"],
        "vector": "[0.25,-1.5,3]",
        "none": None,
        "count": 7,
        "when": values["when"],
        "kept": '{"given": true}',
    }
    with pytest.raises(KeyError, match="missing \\['kept'\\]"):
        inlined(sql, values)
