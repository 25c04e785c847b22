"""The Keys page (admins): this tenant's keys and people; a key created (shown once) for a
person or revoked; a person removed, or their personal memories deleted unread."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import Form, Request, Response

from app.console.auth import Csrf, check_csrf
from app.console.pages import RuntimeDep, back_to, blank_to_none, console_router, page, services_of
from app.domain.errors import NotFoundError
from app.services.scope import Services

router = console_router()


@router.get("/console/keys")
async def keys_page(request: Request, runtime: RuntimeDep) -> Response:
    """This tenant's keys and people (admins): create a key (shown once) for a person,
    revoke one; remove a person, or delete their personal memories unread."""
    async with services_of(request, runtime) as services:
        shown = await _keys_and_people(services)
    return page(request, "keys.html", {**shown, "created": None})


async def _keys_and_people(services: Services) -> dict[str, Any]:
    tenant = services.principal.tenant_id
    return {
        "nav": "keys",
        "keys": await services.keys.list(tenant),
        "people": await services.people.list(tenant),
        "names": await services.people.names(tenant),
    }


@router.post("/console/keys")
async def key_create(
    request: Request,
    runtime: RuntimeDep,
    name: Annotated[str, Form(max_length=1000)],
    role: Annotated[str, Form(max_length=20)],
    csrf_token: Csrf = "",
    person: Annotated[str, Form(max_length=1000)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        first_key = services.principal.key_id is None  # made in open mode: it ends it
        created = await services.keys.create(
            services.principal.tenant_id, name, role, blank_to_none(person)
        )
        listed = await _keys_and_people(services)
    # Shown once, on this answer only (no-store): it is never stored but as a hash.
    shown = {**listed, "created": created, "first_key": first_key}
    if first_key:
        shown["open_mode"] = False  # no longer: the banner would say the opposite
    return page(request, "keys.html", shown, 201)


@router.post("/console/keys/{key_id:uuid}/revoke")
async def key_revoke(
    request: Request,
    runtime: RuntimeDep,
    key_id: UUID,
    csrf_token: Csrf = "",
    force: Annotated[str, Form(max_length=10)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.keys.revoke(services.principal.tenant_id, key_id, force == "on")
    return back_to("/console/keys")


@router.post("/console/people/{person_id:uuid}/{action}")
async def person_action(
    request: Request,
    runtime: RuntimeDep,
    person_id: UUID,
    action: Literal["remove", "forget"],
    csrf_token: Csrf = "",
) -> Response:
    """Remove a person (keys revoked, personal memories deleted), or delete only their
    personal memories, unread."""
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        person = await services.people.get(services.principal.tenant_id, person_id)
        if person is None or person.removed_at is not None:
            raise NotFoundError(f"person {person_id} not found")
        if action == "remove":
            await services.people.remove(person)
        else:
            await services.people.delete_personal(person)
    return back_to("/console/keys")
