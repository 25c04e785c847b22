"""The Stats page: counts, health, the most used; for an admin, what the next prune would
archive, and the prune itself."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Request, Response

from app.console.auth import Csrf, check_csrf
from app.console.pages import (
    PAGE_SIZE,
    RuntimeDep,
    Text,
    back_to,
    blank_to_none,
    console_router,
    page,
    services_of,
)
from app.domain.memory import Memory

router = console_router()


@router.get("/console/stats")
async def stats_page(request: Request, runtime: RuntimeDep, source_repo: Text = None) -> Response:
    """Counts, health, most used; for an admin, what the next prune would archive."""
    repo = blank_to_none(source_repo)
    async with services_of(request, runtime) as services:
        stats = await services.stats.stats(repo)
        preview = None
        would_archive: list[Memory] = []
        if services.principal.can("admin"):
            preview = await services.lifecycle.prune(repo, dry_run=True)
            would_archive = await services.memories.get_many(preview.ids[:PAGE_SIZE])
    return page(
        request,
        "stats.html",
        {
            "nav": "stats",
            "form": {"source_repo": repo or ""},
            "stats": stats,
            "preview": preview,
            "would_archive": would_archive,
        },
    )


@router.post("/console/prune")
async def prune_now(
    request: Request,
    runtime: RuntimeDep,
    csrf_token: Csrf = "",
    source_repo: Annotated[str, Form(max_length=1000)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.lifecycle.prune(blank_to_none(source_repo), dry_run=False)
    return back_to("/console/stats")
