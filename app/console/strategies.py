"""The Strategies page: the learned strategies, how often search surfaced them (hints
included), and their feedback."""

from __future__ import annotations

from fastapi import Request, Response

from app.console.pages import (
    PAGE_SIZE,
    Cursor,
    RuntimeDep,
    Text,
    blank_to_none,
    console_router,
    page,
    services_of,
)
from app.domain.filters import FilterRequest
from app.domain.inputs.listing import ListRequest

router = console_router()


@router.get("/console/strategies")
async def strategies_page(
    request: Request, runtime: RuntimeDep, source_repo: Text = None, cursor: Cursor = None
) -> Response:
    """Learned strategies: how often search surfaced them (hints included), their feedback."""
    repo = blank_to_none(source_repo)
    asked = ListRequest(
        FilterRequest(source_repo=repo, memory_type=["strategy"]), PAGE_SIZE, cursor
    )
    async with services_of(request, runtime) as services:
        listed = await services.memories.list_page(asked)
    return page(
        request,
        "strategies.html",
        {"nav": "strategies", "form": {"source_repo": repo or ""}, "listed": listed},
    )
