"""/search: hybrid keyword + vector search (GET for short queries, POST for long ones)."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import CanRead, RuntimeDep, SearchServiceDep
from app.api.schemas import MemoryOut, SearchIn, SearchOut, SearchResultOut, TrustLevelField
from app.config import Settings
from app.domain.errors import InvalidInputError
from app.domain.memory import MEMORY_TYPE_PATTERN, trust_at_least
from app.domain.validation import clean_text
from app.repository.search import SearchFilter
from app.services.search import SearchRequest, SearchResponse

router = APIRouter(tags=["search"])


def search_request(body: SearchIn, settings: Settings) -> SearchRequest:
    query = clean_text(body.q, "q", max_chars=settings.max_query_chars)
    for memory_type in body.memory_type or []:
        if not re.fullmatch(MEMORY_TYPE_PATTERN, memory_type):
            raise InvalidInputError(
                f"unknown memory_type '{memory_type[:40]}'", field="memory_type"
            )
    for tag in body.tags or []:
        clean_text(tag, "tags", max_chars=settings.max_tag_chars)
    if body.source_repo is not None:
        clean_text(body.source_repo, "source_repo", max_chars=300)
    filters = SearchFilter(
        source_repo=body.source_repo,
        memory_types=body.memory_type,
        tags=body.tags,
        trust_levels=trust_at_least(body.min_trust) if body.min_trust else None,
        min_relevance=body.min_relevance,
        include_archived=body.include_archived,
    )
    return SearchRequest(query, filters, body.limit, body.alpha, body.track_access)


def render_search(response: SearchResponse) -> SearchOut:
    return SearchOut(
        results=[
            SearchResultOut(
                memory=MemoryOut.of(hit.memory),
                score=hit.score,
                similarity=hit.similarity,
                vector_similarity=hit.vector_similarity,
                keyword_score=hit.keyword_score,
                decayed_score=hit.decayed_score,
            )
            for hit in response.hits
        ],
        alpha=response.alpha,
        took_ms=response.took_ms,
        degraded=response.degraded,
    )


@router.get("/search", response_model=SearchOut, dependencies=[CanRead])
async def search_get(
    service: SearchServiceDep,
    runtime: RuntimeDep,
    q: str,
    source_repo: str | None = None,
    memory_type: Annotated[list[str] | None, Query()] = None,
    tags: Annotated[list[str] | None, Query()] = None,
    min_trust: TrustLevelField | None = None,
    min_relevance: Annotated[float | None, Query(ge=0.0, le=100.0)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    alpha: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
    include_archived: bool = False,
    track_access: bool = True,
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
    )
    return render_search(await service.search(search_request(body, runtime.settings)))


@router.post("/search", response_model=SearchOut, dependencies=[CanRead])
async def search_post(body: SearchIn, service: SearchServiceDep, runtime: RuntimeDep) -> SearchOut:
    return render_search(await service.search(search_request(body, runtime.settings)))
