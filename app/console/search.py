"""The Search page, the console's home: a query's hits with each one's score parts, filtered
by repository, type and who wrote it; an empty query lists the newest."""

from __future__ import annotations

from fastapi import Request, Response

from app.console.pages import (
    PAGE_SIZE,
    Boxes,
    Flag,
    RuntimeDep,
    Text,
    console_router,
    page,
    services_of,
)
from app.domain.inputs.search import SearchRequest

router = console_router()


@router.get("/")
async def search_page(
    request: Request,
    runtime: RuntimeDep,
    boxes: Boxes,
    q: Text = None,
    weak: Flag = False,
    archived: Flag = False,
) -> Response:
    """Search with each hit's score parts; an empty query lists the newest."""
    asked = SearchRequest(
        q=q or "",
        filter=boxes.filter(archived=archived),
        limit=PAGE_SIZE,
        track_access=False,  # an owner looking is not an agent using it
        floor=not weak,
    )
    async with services_of(request, runtime) as services:
        response = await services.search.search(asked)
        people = await services.people.names(services.principal.tenant_id)
    form = {"q": q or "", **boxes.form()}
    return page(
        request,
        "search.html",
        {
            "nav": "search",
            "form": form,
            "weak": weak,
            "archived": archived,
            "response": response,
            "people": people,
        },
    )
