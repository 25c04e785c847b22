"""Which memories a search or a list looks at: one filter, one set of rules, for every door.

app/repository/filters.py turns it into SQL in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from app.domain.memory import TRUST_ORDER, trust_at_least
from app.domain.times import time_window
from app.domain.validation import (
    Limits,
    bounded_list,
    clean_line,
    clean_memory_type,
    clean_tags,
    number_in,
    one_of,
)

MAX_MIN_RELEVANCE = 100.0
MIN_RELEVANCE = (0.0, MAX_MIN_RELEVANCE)  # the filter's inclusive range
# "all": a repository's memories and the global ones; "repo": the repository's only.
SCOPES = ("all", "repo")


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    source_repo: str | None = None
    # With a repository: also the memories filed under none (global: a person's or a
    # team's conventions). scope=repo leaves them out.
    include_global: bool = True
    memory_types: Sequence[str] | None = None
    tags: Sequence[str] | None = None  # all of them
    trust_levels: Sequence[str] | None = None  # any of them
    min_relevance: float | None = None
    include_archived: bool = False
    include_superseded: bool = False
    # An admin's explicit look; no agent is ever handed a quarantined memory.
    include_quarantined: bool = False
    # Stored in [since, until) (created_at; app/domain/times.py reads what the doors send).
    since: datetime | None = None
    until: datetime | None = None


def memory_filter(
    limits: Limits,
    *,
    source_repo: str | None = None,
    memory_type: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    min_trust: str | None = None,
    min_relevance: float | None = None,
    include_archived: bool = False,
    include_quarantined: bool = False,
    scope: str | None = None,
    since: str | None = None,
    until: str | None = None,
    now: datetime | None = None,
) -> MemoryFilter:
    """The filter as the doors send it (each field named as sent), or the reason it is not
    one. A relative time is read at `now` (the present when not given)."""
    start, end = time_window(since, until, now or datetime.now(UTC))
    types = [clean_memory_type(t) or "" for t in bounded_list(memory_type, "memory_type")]
    trust = one_of(min_trust, "min_trust", TRUST_ORDER, "") if min_trust else None
    return MemoryFilter(
        source_repo=clean_line(source_repo, "source_repo"),
        include_global=one_of(scope, "scope", SCOPES, "all") == "all",
        memory_types=types or None,
        tags=list(clean_tags(tags, limits)) or None,
        trust_levels=trust_at_least(trust) if trust else None,  # type: ignore[arg-type]
        min_relevance=(
            None
            if min_relevance is None
            else number_in(min_relevance, "min_relevance", *MIN_RELEVANCE)
        ),
        include_archived=bool(include_archived),
        include_quarantined=bool(include_quarantined),
        since=start,
        until=end,
    )
