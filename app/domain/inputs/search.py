"""A search as a client sends it (SearchRequest) and as the services run it (SearchQuery):
its text bounded to a number of distinct words, its filter, its limit; and a strategy
hint's search."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.domain.errors import InvalidInputError
from app.domain.filters import FilterRequest, MemoryFilter, memory_filter
from app.domain.validation import Limits, clean_line, clean_text, number_in

MAX_SEARCH_LIMIT = 100
ALPHA = (0.0, 1.0)  # keyword only .. vector only


@dataclass(frozen=True, slots=True)
class SearchRequest:
    q: str
    filter: FilterRequest = field(default_factory=FilterRequest)
    limit: int = 10
    alpha: float | None = None
    track_access: bool = True
    # False: every match up to `limit`, however far below the best.
    floor: bool = True
    # The branch the agent works on: its memories rank a little higher, none is left out.
    git_branch: str | None = None


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A search's validated input: `text` is what is searched, `dropped_terms` how many
    distinct words past the limit were left out of it."""

    text: str
    filter: MemoryFilter
    limit: int
    alpha: float | None
    track_access: bool
    git_branch: str | None = None
    dropped_terms: int = 0
    floor: bool = True


_WORD = re.compile(r"\w+", re.UNICODE)


def bound_query_terms(text: str, max_terms: int) -> tuple[str, int]:
    """The text up to its `max_terms`-th distinct word, and how many distinct words were
    cut: the keyword side reads the index once per distinct term."""
    seen: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if word in seen:
            continue
        if len(seen) == max_terms:
            rest = {w.lower() for w in _WORD.findall(text[match.start() :])} - seen
            return text[: match.start()].rstrip(), len(rest)
        seen.add(word)
    return text, 0


def search_query(request: SearchRequest, limits: Limits) -> SearchQuery:
    text = clean_text(request.q, "q", max_chars=limits.max_query_chars)
    text, dropped = bound_query_terms(text, limits.max_query_terms)
    limit = request.limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidInputError(f"limit must be 1 to {MAX_SEARCH_LIMIT}", field="limit")
    return SearchQuery(
        text=text,
        filter=memory_filter(request.filter, limits),
        limit=limit,
        alpha=None if request.alpha is None else number_in(request.alpha, "alpha", *ALPHA),
        track_access=bool(request.track_access),
        git_branch=clean_line(request.git_branch, "git_branch"),
        dropped_terms=dropped,
        floor=bool(request.floor),
    )


STRATEGY_HINT_CANDIDATES = 2


def hint_query(task: str, source_repo: str, limits: Limits) -> SearchQuery:
    """A strategy hint's search: the task (cut like any query) among this repository's
    strategies. The task may be longer than a query: a hint never fails for its length."""
    task = clean_text(task, "task")
    repo = clean_line(source_repo, "source_repo")
    if not task or not repo:
        raise InvalidInputError("task and source_repo must not be empty", field="task")
    text, dropped = bound_query_terms(task[: limits.max_query_chars], limits.max_query_terms)
    return SearchQuery(
        text=text,
        # Handed over before planning, unasked: a strategy held for review is not.
        filter=MemoryFilter(source_repo=repo, memory_types=["strategy"], include_held=False),
        limit=STRATEGY_HINT_CANDIDATES,
        alpha=None,
        track_access=True,
        dropped_terms=dropped,
    )
