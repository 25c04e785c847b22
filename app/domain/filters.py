"""Which memories a search or a list looks at: one filter, one set of rules, for every door.

app/repository/filters.py turns it into SQL in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from uuid import UUID

from app.domain.errors import InvalidInputError
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
    # False for what is handed over unasked (a snapshot, a recall, a hint): the memories
    # held for a person's review are left out (app/domain/provenance.py), but for those
    # `held_session` wrote (the asking session sees its own writes).
    include_held: bool = True
    held_session: UUID | None = field(default=None, metadata={"switch": True})
    # What one person's keys wrote (the console's "who wrote what"). Whom a personal memory
    # reaches is not a filter's to say: row security's (migration 0045).
    person_id: UUID | None = None

    @property
    def is_narrowed(self) -> bool:
        """Whether the filter keeps a part of the tenant's live rows: any field but the
        switches (a bool's default, or marked so) is set."""
        return any(
            getattr(self, f.name) not in (None, (), [])
            for f in fields(self)
            if not isinstance(f.default, bool) and not f.metadata.get("switch")
        )


@dataclass(frozen=True, slots=True)
class FilterRequest:
    """The filter as the doors send it, each field named as sent: one shape for search,
    list, export and recall (memory_filter() reads it)."""

    source_repo: str | None = None
    memory_type: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    min_trust: str | None = None
    min_relevance: float | None = None
    include_archived: bool = False
    # An admin's explicit look at quarantined rows (a list or an export).
    include_quarantined: bool = False
    scope: str | None = None  # "all" (the default: with global memories) or "repo"
    since: str | None = None  # stored in [since, until): app/domain/times.py
    until: str | None = None
    # What is handed over unasked (recall, a hint), for this session (its id, if known):
    # the held memories are left out, but for those the session wrote.
    handed_unasked: bool = False
    session_id: str | UUID | None = None
    person_id: str | UUID | None = None  # what this person's keys wrote


def memory_filter(
    request: FilterRequest, limits: Limits, now: datetime | None = None
) -> MemoryFilter:
    """The filter the request asks for, or the reason it is not one. A relative time is read
    at `now` (the present when not given)."""
    start, end = time_window(request.since, request.until, now or datetime.now(UTC))
    types = [clean_memory_type(t) or "" for t in bounded_list(request.memory_type, "memory_type")]
    trust = one_of(request.min_trust, "min_trust", TRUST_ORDER, "") if request.min_trust else None
    return MemoryFilter(
        source_repo=clean_line(request.source_repo, "source_repo"),
        include_global=one_of(request.scope, "scope", SCOPES, "all") == "all",
        memory_types=types or None,
        tags=list(clean_tags(request.tags, limits)) or None,
        trust_levels=trust_at_least(trust) if trust else None,  # type: ignore[arg-type]
        min_relevance=(
            None
            if request.min_relevance is None
            else number_in(request.min_relevance, "min_relevance", *MIN_RELEVANCE)
        ),
        include_archived=bool(request.include_archived),
        include_quarantined=bool(request.include_quarantined),
        since=start,
        until=end,
        include_held=not request.handed_unasked,
        held_session=_an_id(request.session_id, "session_id") if request.handed_unasked else None,
        person_id=_an_id(request.person_id, "person_id"),
    )


def _an_id(value: str | UUID | None, field: str) -> UUID | None:
    if value is None or isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except ValueError as exc:
        raise InvalidInputError(f"{field} is an id (a UUID)", field=field) from exc
