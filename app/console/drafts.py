"""The console's Drafts page: the review queue a person works through. Each draft whole, its
text editable in place and kept in one click (a rewrite when changed), its evidence and its
session under it; near-duplicates together, the first kept and the rest dropped in one
click; many kept or dropped at once by their tick boxes; the last dropped, to put back."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

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
from app.domain.drafts import MAX_QUEUE_PAGE
from app.domain.errors import InvalidInputError

router = console_router()

Ids = Annotated[list[UUID], Form(default_factory=list)]
BULK_ACTIONS = ("keep", "drop")


def as_typed(text: str) -> str | None:
    """A textarea's text as the person typed it: a browser sends its lines as CRLF, which
    must not make an unchanged draft a rewrite; blank is "as drafted"."""
    return text.replace("\r\n", "\n").strip() or None


@router.get("/console/drafts")
async def drafts_page(request: Request, runtime: RuntimeDep, source_repo: Text = None) -> Response:
    """The review queue, newest first (its first MAX_QUEUE_PAGE), near-duplicates grouped;
    for an admin, the last dropped."""
    repo = blank_to_none(source_repo)
    async with services_of(request, runtime) as services:
        queued = await services.drafts.in_groups(repo, MAX_QUEUE_PAGE)
        admin = services.principal.can("admin")
        dropped = await services.drafts.recently_dropped(PAGE_SIZE) if admin else []
    shown = {
        "nav": "drafts", "groups": queued.groups, "more": queued.next_cursor is not None,
        "dropped": dropped, "form": {"source_repo": repo or ""},
        "count": sum(len(g) for g in queued.groups),
    }  # fmt: skip
    return page(request, "drafts.html", shown)


@router.post("/console/drafts/{draft_id:uuid}/keep")
async def draft_keep(
    request: Request,
    runtime: RuntimeDep,
    draft_id: UUID,
    rest: Ids,  # none unless the form lists them
    text: Annotated[str, Form(max_length=100_000)] = "",
    drop_rest: Annotated[str, Form(max_length=10)] = "",
    csrf_token: Csrf = "",
) -> Response:
    """Keep the draft, as its text box holds it; with "drop the rest", the others of its
    group are dropped with it."""
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        if drop_rest == "on":
            await services.drafts.keep_first(draft_id, as_typed(text), rest)
        else:
            await services.drafts.keep(draft_id, as_typed(text))
    return back_to("/console/drafts")


@router.post("/console/drafts/picked")
async def drafts_picked(
    request: Request,
    runtime: RuntimeDep,
    action: Annotated[str, Form(max_length=10)],
    draft: Ids,  # none ticked: the service says so
    csrf_token: Csrf = "",
) -> Response:
    """The ticked drafts, each kept as its text, or all dropped."""
    check_csrf(request, csrf_token)
    if action not in BULK_ACTIONS:  # a field of the form, not a page: refused as input
        raise InvalidInputError(f"action must be one of: {', '.join(BULK_ACTIONS)}", field="action")
    async with services_of(request, runtime) as services:
        if action == "keep":
            await services.drafts.keep_each(draft)
        else:
            await services.drafts.drop(draft)
    return back_to("/console/drafts")


@router.post("/console/drafts/{draft_id:uuid}/restore")
async def draft_restore(
    request: Request,
    runtime: RuntimeDep,
    draft_id: UUID,
    csrf_token: Csrf = "",
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.drafts.restore(draft_id)
    return back_to("/console/drafts")
