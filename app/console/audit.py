"""The Audit page (admins): who changed what, newest first, each entry's memories by their
text, with undo where it applies."""

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
from app.domain.audit import UNDOABLE, AuditQuery

router = console_router()

# The memories an audit entry names on its row (the rest are counted: "+2").
MEMORIES_AN_ENTRY_SHOWS = 3


@router.get("/console/audit")
async def audit_page(request: Request, runtime: RuntimeDep, memory_id: Text = None) -> Response:
    """Who changed what (admins), newest first, with undo where it applies."""
    wanted = UUID(memory_id) if memory_id and is_uuid(memory_id) else None
    async with services_of(request, runtime) as services:
        trail = await services.audit.entries(AuditQuery(memory_id=wanted, limit=PAGE_SIZE * 4))
        # Each entry's memories by their text (one read for the page), not 8 characters of
        # an id that memories written in the same minute share.
        named = {m for e in trail for m in e.memory_ids[:MEMORIES_AN_ENTRY_SHOWS]}
        texts = {m.id: m.content for m in await services.memories.get_many(list(named))}
    shown = {
        "nav": "audit", "entries": trail, "undoable": UNDOABLE, "memory_id": memory_id or "",
        "texts": texts, "memories_shown": MEMORIES_AN_ENTRY_SHOWS,
    }  # fmt: skip
    return page(request, "audit.html", shown)


@router.post("/console/audit/{entry_id:uuid}/undo")
async def audit_undo(
    request: Request, runtime: RuntimeDep, entry_id: UUID, csrf_token: Csrf = ""
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.audit.undo(entry_id)
    return back_to("/console/audit")


def is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True
