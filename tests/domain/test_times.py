"""since and until as the doors take them: ISO 8601 or relative words, read at one `now`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.domain.errors import InvalidInputError
from app.domain.filters import FilterRequest, memory_filter
from app.domain.times import MAX_TIME_CHARS, point_in_time, time_window
from app.domain.validation import Limits

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),
        ("2026-11-01T10:00:00Z", datetime(2026, 11, 1, 10, tzinfo=UTC)),
        ("2026-11-01T10:00:00+02:00", datetime(2026, 11, 1, 8, tzinfo=UTC)),
        ("2026-11-01 10:00", datetime(2026, 11, 1, 10, tzinfo=UTC)),  # no offset: UTC
        ("7d", NOW - timedelta(days=7)),
        ("24h", NOW - timedelta(hours=24)),
        ("30m", NOW - timedelta(minutes=30)),
        ("3 days ago", NOW - timedelta(days=3)),
        ("2 weeks ago", NOW - timedelta(weeks=2)),
        ("yesterday", NOW - timedelta(days=1)),
        ("last week", NOW - timedelta(weeks=1)),
        ("  now ", NOW),
    ],
)
def test_a_time_is_iso_8601_or_relative_to_now(text: str, instant: datetime) -> None:
    assert point_in_time(text, "since", NOW) == instant


@pytest.mark.parametrize("text", [None, "", "   "])
def test_no_time_is_no_bound(text: str | None) -> None:
    assert point_in_time(text, "since", NOW) is None


@pytest.mark.parametrize("text", ["the day the build broke", "2w", "x" * (MAX_TIME_CHARS + 1)])
def test_what_names_no_time_is_refused_by_its_field(text: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        point_in_time(text, "until", NOW)
    assert refused.value.field == "until"


def test_an_empty_window_is_refused_and_both_ends_are_read_at_one_now() -> None:
    with pytest.raises(InvalidInputError, match="since must be before until"):
        time_window("yesterday", "7d", NOW)
    assert time_window("7d", "yesterday", NOW) == (NOW - timedelta(days=7), NOW - timedelta(days=1))


def test_the_filter_carries_the_window() -> None:
    kept = memory_filter(FilterRequest(since="2026-11-01", until="24h"), Limits(), now=NOW)
    assert (kept.since, kept.until) == (datetime(2026, 11, 1, tzinfo=UTC), NOW - timedelta(days=1))
