"""A memory's page: the memory whole, its history (what it replaced and what replaced it),
its use, its provenance and integrity; and the buttons on it (edit, supersede, archive,
restore, pin, delete, confirm, approve), as the caller's role allows."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import Form, Request, Response

from app.console.auth import Csrf, check_csrf
from app.console.pages import RuntimeDep, back_to, console_router, page, services_of
from app.domain.errors import NotFoundError
from app.domain.inputs.memories import MemoryRequest

router = console_router()

ACTIONS = ("archive", "restore", "pin", "unpin", "delete", "confirm", "approve")


@router.get("/console/memories/{memory_id:uuid}")
async def memory_page(request: Request, runtime: RuntimeDep, memory_id: UUID) -> Response:
    """One memory whole: its history (what it replaced and what replaced it), its use,
    its provenance and integrity; an admin's buttons."""
    async with services_of(request, runtime) as services:
        # The console is a person's tool: an admin sees a quarantined memory, marked.
        memory = await services.memories.get(memory_id, services.principal.can("admin"))
        older, newer = await services.memories.lineage(memory_id)
        people = await services.people.names(services.principal.tenant_id)
    return page(
        request,
        "memory.html",
        {"nav": "browse", "memory": memory, "older": older, "newer": newer, "people": people},
    )


# The specific memory actions first: the generic one below would take their paths.


@router.post("/console/memories/{memory_id:uuid}/edit")
async def memory_edit(
    request: Request,
    runtime: RuntimeDep,
    memory_id: UUID,
    csrf_token: Csrf = "",
    tags: Annotated[str, Form(max_length=4000)] = "",
    category: Annotated[str, Form(max_length=1000)] = "",
    pinned: Annotated[str, Form(max_length=10)] = "",
) -> Response:
    """Tags (comma-separated), category and pinned, as the caller's role allows."""
    check_csrf(request, csrf_token)
    changes = {
        "tags": [t.strip() for t in tags.split(",") if t.strip()],
        "category": category.strip() or None,
        "pinned": pinned == "on",
    }
    async with services_of(request, runtime) as services:
        await services.lifecycle.edit(memory_id, changes)
    return back_to(f"/console/memories/{memory_id}")


@router.post("/console/memories/{memory_id:uuid}/supersede")
async def memory_supersede(
    request: Request,
    runtime: RuntimeDep,
    memory_id: UUID,
    content: Annotated[str, Form(max_length=100_000)],
    csrf_token: Csrf = "",
) -> Response:
    """Replace the memory with corrected content (the old one stays, linked, in history)."""
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        old = await services.memories.get(memory_id)
        # A person's own correction: theirs to vouch for where the key may (never held).
        asked = MemoryRequest(
            content=content, memory_type=old.memory_type, tags=old.tags, category=old.category,
            source="console", trust_level=services.principal.own_words_trust,
        )  # fmt: skip
        _, outcome = await services.lifecycle.supersede(memory_id, asked)
    return back_to(f"/console/memories/{outcome.memory.id}")


@router.post("/console/memories/{memory_id:uuid}/{action}")
async def memory_action(
    request: Request,
    runtime: RuntimeDep,
    memory_id: UUID,
    action: str,
    csrf_token: Csrf = "",
) -> Response:
    check_csrf(request, csrf_token)
    if action not in ACTIONS:
        raise NotFoundError(f"no action {action[:40]!r}")
    async with services_of(request, runtime) as services:
        if action == "archive":
            await services.lifecycle.archive(memory_id)
        elif action == "restore":
            await services.lifecycle.restore(memory_id)
        elif action in ("pin", "unpin"):
            changes = {"pinned": action == "pin"}
            await services.lifecycle.edit(memory_id, changes)
        elif action == "confirm":
            await services.lifecycle.confirm(memory_id)
        elif action == "approve":
            await services.lifecycle.approve(memory_id)
            return back_to("/console/review")
        else:
            await services.memories.delete(memory_id)
            return back_to("/console/browse")
    return back_to(f"/console/memories/{memory_id}")
