"""The Review page: the memories held for a person's review, oldest first, each with why
and the sources its session read; an admin approves one from its memory page (memory.py)."""

from __future__ import annotations

from fastapi import Request, Response

from app.console.pages import RuntimeDep, console_router, page, services_of

router = console_router()


@router.get("/console/review")
async def review_page(request: Request, runtime: RuntimeDep) -> Response:
    """The memories held for a person's review, oldest first, each with why and the
    sources its session read; an admin approves one here."""
    async with services_of(request, runtime) as services:
        held = await services.lifecycle.held()
    return page(request, "review.html", {"nav": "review", "held": held})
