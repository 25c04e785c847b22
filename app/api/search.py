"""/search: hybrid keyword + vector search (GET for short queries, POST for long ones)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import ServicesDep
from app.api.schemas import SearchIn
from app.views import SearchOut, render_search

router = APIRouter(tags=["search"])


@router.get("/search", response_model=SearchOut)
async def search_get(
    services: ServicesDep,
    q: str,
    source_repo: str | None = None,
    memory_type: Annotated[list[str] | None, Query()] = None,
    tags: Annotated[list[str] | None, Query()] = None,
    min_trust: str | None = None,
    min_relevance: float | None = None,
    limit: int = 10,
    alpha: float | None = None,
    include_archived: bool = False,
    track_access: bool = True,
    floor: bool = True,
) -> SearchOut:
    body = SearchIn(
        q=q,
        source_repo=source_repo,
        memory_type=memory_type,
        tags=tags,
        min_trust=min_trust,
        min_relevance=min_relevance,
        limit=limit,
        alpha=alpha,
        include_archived=include_archived,
        track_access=track_access,
        floor=floor,
    )
    return render_search(await services.search.search(body.draft()))


@router.post("/search", response_model=SearchOut)
async def search_post(body: SearchIn, services: ServicesDep) -> SearchOut:
    return render_search(await services.search.search(body.draft()))
