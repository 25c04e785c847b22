"""The Tidy page (admins): merge, replace and retire proposals, each accepted or dismissed
in one click, looked for again on request; the last decided, to undo."""

from __future__ import annotations

from uuid import UUID

from fastapi import Request, Response

from app.console.auth import Csrf, check_csrf
from app.console.pages import (
    PAGE_SIZE,
    RuntimeDep,
    Text,
    back_to,
    console_router,
    page,
    services_of,
)
from app.domain.errors import NotFoundError
from app.domain.tidy import (
    ARCHIVING_KINDS,
    MAX_PROPOSALS_PAGE,
    MEASURED_PRECISION,
    PROPOSAL_KINDS,
    SHOWN_BY_DEFAULT,
)

router = console_router()


@router.get("/console/tidy")
async def tidy_page(request: Request, runtime: RuntimeDep, every_kind: Text = None) -> Response:
    """Tidy proposals (admins): merge, replace, retire, each accepted or dismissed in one
    click; the last decided, to undo. By default only the kinds measured right nine times
    in ten or more; "every kind" shows the rest."""
    kinds = PROPOSAL_KINDS if every_kind else None
    async with services_of(request, runtime) as services:
        pending = await services.tidy.pending(kinds, MAX_PROPOSALS_PAGE)
        not_listed = await services.tidy.not_listed(kinds)
        decided = await services.tidy.recently_decided(PAGE_SIZE)
    shown = {
        "nav": "tidy", "proposals": pending, "decided": decided, "every_kind": bool(every_kind),
        "not_listed": not_listed,
        "shown_by_default": SHOWN_BY_DEFAULT, "precision": MEASURED_PRECISION,
        "archiving": ARCHIVING_KINDS,
    }  # fmt: skip
    return page(request, "tidy.html", shown)


@router.post("/console/tidy/refresh")
async def tidy_refresh(request: Request, runtime: RuntimeDep, csrf_token: Csrf = "") -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.tidy.refresh()
    return back_to("/console/tidy")


@router.post("/console/tidy/{proposal_id:uuid}/{action}")
async def tidy_action(
    request: Request,
    runtime: RuntimeDep,
    proposal_id: UUID,
    action: str,
    csrf_token: Csrf = "",
) -> Response:
    check_csrf(request, csrf_token)
    if action not in ("accept", "dismiss", "undo"):
        raise NotFoundError(f"no action {action[:40]!r}")
    async with services_of(request, runtime) as services:
        await getattr(services.tidy, action)(proposal_id)
    return back_to("/console/tidy")
