"""What a client sends to read memories by a filter: the filter, declared once (FilterIn),
and the search body and the search and list query strings that inherit it. Types only, as
in app/api/schemas/: the rules are the domain's (app/domain/filters.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from uuid import UUID

from pydantic import ConfigDict, Field

from app.api.examples import REPO, SINCE_HELP, TIME_RULES, UNTIL_HELP, body
from app.api.rules import DEFAULT_LIMITS, MEMORY_TYPES, TAGS, documented, text_rules
from app.api.schemas.body import Body, JsonInt
from app.api.schemas.memory_fields import Branch, Repository
from app.domain.drafts import MAX_QUEUE_PAGE
from app.domain.filters import MIN_RELEVANCE, SCOPES, FilterRequest
from app.domain.inputs.listing import CURSOR_PATTERN, MAX_LIST_LIMIT, ListRequest
from app.domain.inputs.search import ALPHA, MAX_SEARCH_LIMIT, SearchRequest
from app.domain.memory import TRUST_ORDER


class FilterIn(Body):
    """Which memories a search or a list looks at (app/domain/filters.py): declared once,
    inherited by every door that filters."""

    source_repo: Repository = None
    memory_type: list[str] | None = Field(default=None, json_schema_extra=MEMORY_TYPES)
    tags: list[str] | None = Field(default=None, json_schema_extra=TAGS)
    min_trust: str | None = Field(default=None, json_schema_extra=documented(choices=TRUST_ORDER))
    min_relevance: float | None = Field(
        default=None, json_schema_extra=documented(between=MIN_RELEVANCE)
    )
    include_archived: bool = False
    scope: str | None = Field(
        default=None,
        description='With source_repo: "all" (default) also finds the global memories (filed'
        ' under no repository), "repo" only the repository\'s.',
        json_schema_extra=documented(choices=SCOPES),
    )
    since: str | None = Field(
        default=None, description=SINCE_HELP, examples=["7d"], json_schema_extra=TIME_RULES
    )
    until: str | None = Field(
        default=None, description=UNTIL_HELP, examples=["yesterday"], json_schema_extra=TIME_RULES
    )
    person_id: UUID | None = Field(
        default=None, description="Only what this person's keys wrote (GET /admin/people)."
    )

    def filter_draft(self) -> FilterRequest:
        return FilterRequest(**self.model_dump(include=set(FilterIn.model_fields)))

    def rest(self) -> dict[str, Any]:
        """The fields a subclass adds to the filter's."""
        return self.model_dump(exclude=set(FilterIn.model_fields))


class SearchIn(FilterIn):
    model_config = ConfigDict(
        json_schema_extra=body({"q": "flaky test temp dir", "source_repo": REPO, "limit": 5}),
    )

    q: str = Field(
        examples=["flaky test temp dir"],
        description="What to look for. Past its first "
        f"{DEFAULT_LIMITS.max_query_terms} distinct words a query is cut (and the answer says so).",
        json_schema_extra=text_rules("max_query_chars"),
    )
    limit: JsonInt = Field(default=10, json_schema_extra=documented(between=(1, MAX_SEARCH_LIMIT)))
    alpha: float | None = Field(default=None, json_schema_extra=documented(between=ALPHA))
    track_access: bool = True
    floor: bool = Field(
        default=True, description="false: every match up to limit, however far below the best"
    )
    git_branch: Branch = Field(
        default=None,
        description="The branch you work on: its memories rank a little higher (BRANCH_BOOST);"
        " none is left out.",
    )

    def request(self) -> SearchRequest:
        return SearchRequest(filter=self.filter_draft(), **self.rest())


# Query strings arrive as text: their models convert values, and leave other parameters
# (format, max_tokens) to the route.
_QUERY_STRING = ConfigDict(extra="ignore", strict=False)


class SearchQueryIn(SearchIn):
    """SearchIn read from a query string (GET /search): the same fields and rules."""

    model_config = _QUERY_STRING


class ListQueryIn(FilterIn):
    """A page of memories, newest first (GET /memories), read from a query string."""

    model_config = _QUERY_STRING

    include_quarantined: bool = Field(
        default=False,
        description="Admins only: also quarantined memories (imported as such, or changed"
        " outside the API), which no agent is ever handed",
    )
    limit: JsonInt = Field(default=50, json_schema_extra=documented(between=(1, MAX_LIST_LIMIT)))
    cursor: str | None = Field(default=None, json_schema_extra=documented(pattern=CURSOR_PATTERN))

    def request(self) -> ListRequest:
        kept = replace(self.filter_draft(), include_quarantined=self.include_quarantined)
        return ListRequest(filter=kept, limit=self.limit, cursor=self.cursor)


class DraftQueueIn(Body):
    """A page of the review queue's pending drafts, newest first (GET /drafts)."""

    model_config = _QUERY_STRING

    source_repo: Repository = Field(default=None, examples=[REPO])
    limit: JsonInt = Field(default=50, json_schema_extra=documented(between=(1, MAX_QUEUE_PAGE)))
    cursor: str | None = Field(default=None, json_schema_extra=documented(pattern=CURSOR_PATTERN))
