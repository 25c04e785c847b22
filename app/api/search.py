"""/search: hybrid keyword + vector search (GET for short queries, POST for long ones)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from app.api.deps import ServicesDep
from app.api.examples import MaxTokens
from app.api.queries import SearchIn, SearchQueryIn
from app.api.responses import CompactSearchOut, render_compact_json
from app.domain.inputs.budgets import presentation
from app.shapes import SearchOut, render_search

router = APIRouter(tags=["search"])


async def search_and_render(
    services: ServicesDep, body: SearchIn, result_format: str, max_tokens: int | None
) -> Any:
    shown, budget = presentation(result_format, max_tokens)  # refused before searching
    response = await services.search.search(body.request())
    if shown == "compact":
        return render_compact_json(response, datetime.now(UTC), budget)
    return render_search(response)


@router.get("/search", response_model=SearchOut | CompactSearchOut, summary="Search (hybrid)")
async def search_get(
    services: ServicesDep,
    query: Annotated[SearchQueryIn, Query()],
    format: Literal["full", "compact"] = "full",
    max_tokens: MaxTokens = None,
) -> Any:
    """Hybrid search. format=compact answers each hit in a few fields (id, type, score,
    age, tags, content, a cut context), packed best-first within max_tokens."""
    return await search_and_render(services, query, format, max_tokens)


@router.post(
    "/search", response_model=SearchOut | CompactSearchOut, summary="Search (hybrid), long query"
)
async def search_post(
    body: SearchIn,
    services: ServicesDep,
    format: Literal["full", "compact"] = "full",
    max_tokens: MaxTokens = None,
) -> Any:
    """The same search as `GET /search`, for a query too long for a URL."""
    return await search_and_render(services, body, format, max_tokens)
