"""Points in time as the doors take them (`since`, `until`): ISO 8601, or a time relative to
now in words, read by dateparser (scrapinghub's) rather than by hand.

    2026-11-01              midnight UTC of that day
    2026-11-01T10:00:00Z    that instant (any offset; none: UTC)
    7d, 24h, 30m, 1y        that long ago
    3 days ago, 2 weeks ago
    yesterday, last week    24 hours ago, 7 days ago (a point, not a calendar day or week)
    today, now              now

Limits: English only; a weekday ("monday") is the last one at midnight UTC; "2w" is not
understood (dateparser reads "2 weeks"); a relative form is measured from the request's
own time, so a page and the next one may differ by the moments between them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.domain.errors import InvalidInputError

MAX_TIME_CHARS = 64
TIME_EXAMPLES = ("2026-11-01", "2026-11-01T10:00:00Z", "7d", "24h", "yesterday", "last week")


def _parser_settings(now: datetime) -> dict[str, Any]:
    return {
        "RELATIVE_BASE": now,
        "PREFER_DATES_FROM": "past",
        "TIMEZONE": "UTC",
        "TO_TIMEZONE": "UTC",
        "RETURN_AS_TIMEZONE_AWARE": True,
    }


def point_in_time(text: str | None, field: str, now: datetime) -> datetime | None:
    """The instant `text` names (aware, UTC), or None for no text; InvalidInputError when
    it names none."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    if len(text) > MAX_TIME_CHARS:
        raise InvalidInputError(f"{field} must be at most {MAX_TIME_CHARS} characters", field=field)
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        import dateparser  # its language data load on first use (warm_up)

        parsed = dateparser.parse(text, languages=["en"], settings=_parser_settings(now))
        if parsed is None:
            raise InvalidInputError(
                f"{field} is not a time: ISO 8601 ({', '.join(TIME_EXAMPLES[:2])}) or relative"
                f" ({', '.join(TIME_EXAMPLES[2:])}, 3 days ago)",
                field=field,
            ) from None
        instant = parsed
    return instant.replace(tzinfo=UTC) if instant.tzinfo is None else instant.astimezone(UTC)


def time_window(
    since: str | None, until: str | None, now: datetime
) -> tuple[datetime | None, datetime | None]:
    """[since, until): both ends read at the same `now`; an empty window is refused."""
    start = point_in_time(since, "since", now)
    end = point_in_time(until, "until", now)
    if start is not None and end is not None and start >= end:
        raise InvalidInputError("since must be before until", field="since")
    return start, end


def warm_up() -> None:
    """Load dateparser's language data, so that no request pays for it."""
    point_in_time("7 days ago", "since", datetime.now(UTC))
