"""The Browse page: the memories by repository, type and who wrote it, newest first, a page
at a time."""

from __future__ import annotations

from fastapi import Request, Response

from app.console.pages import (
    PAGE_SIZE,
    Boxes,
    Cursor,
    Flag,
    RuntimeDep,
    console_router,
    page,
    services_of,
)
from app.domain.inputs.listing import ListRequest

router = console_router()


@router.get("/console/browse")
async def browse_page(
    request: Request,
    runtime: RuntimeDep,
    boxes: Boxes,
    archived: Flag = False,
    quarantined: Flag = False,
    cursor: Cursor = None,
) -> Response:
    """By repository, type and who wrote it, newest first, a page at a time (keyset: stable
    under writes); an admin may list the quarantined ones too (marked)."""
    asked = ListRequest(boxes.filter(archived=archived, quarantined=quarantined), PAGE_SIZE, cursor)
    async with services_of(request, runtime) as services:
        listed = await services.memories.list_page(asked)
        people = await services.people.names(services.principal.tenant_id)
    form = boxes.form()
    return page(
        request,
        "browse.html",
        {
            "nav": "browse",
            "form": form,
            "archived": archived,
            "quarantined": quarantined,
            "listed": listed,
            "people": people,
        },
    )
