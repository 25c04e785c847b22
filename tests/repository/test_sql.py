"""SQL bound by name: what `named()` turns into asyncpg's `$n`, and what it leaves."""

from __future__ import annotations

import pytest

from app.repository.sql import named


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
