"""Connected clients on the console. A remote MCP client's /authorize (app/api/oauth.py)
sends the person here: signed in (with their key; the sign-in comes back here), they see
the client by its name and id, where its grant will be delivered, and approve it with a
role no higher than their own (agent or reader), or deny it. The Connections page lists the
clients they connected (an admin: the tenant's), each revocable at once."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote, urlsplit
from uuid import UUID

from fastapi import Form, Path, Request, Response
from fastapi.responses import RedirectResponse

from app.console.auth import Csrf, check_csrf, signed_in
from app.console.pages import RuntimeDep, back_to, console_router, page, secured, services_of
from app.domain.oauth import (
    grantable_roles,
    is_client_document_url,
    is_loopback_uri,
    redirect_source,
)
from app.http_headers import page_headers

router = console_router()

Secret = Annotated[str, Path(max_length=100, pattern=r"^[A-Za-z0-9_\-]+$")]
CONSENT = "/console/oauth/"


def consent_headers(redirect_uri: str) -> dict[str, str]:
    """The console's policy, its forms allowed to lead on to the client's redirect URI (a
    browser checks form-action on the redirect after the form too)."""
    source = redirect_source(redirect_uri)
    also = f" {source}" if source else ""
    return page_headers(
        f"default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'{also}"
    )


@router.get(CONSENT + "{secret}")
async def consent_page(request: Request, runtime: RuntimeDep, secret: Secret) -> Response:
    """Who asks, where the grant goes, and the roles this person may give it."""
    if await signed_in(request, runtime) is None:
        return back_to("/console/sign-in?next=" + quote(CONSENT + secret, safe=""))
    async with services_of(request, runtime) as services:
        asked = await services.oauth.pending(secret)
        principal = services.principal
    shown = {
        "nav": "connections", "asked": asked, "secret": secret,
        "roles": grantable_roles(principal.role),
        "document_host": urlsplit(asked.client_id).hostname
        if is_client_document_url(asked.client_id) else None,
        "loopback": is_loopback_uri(asked.redirect_uri),
    }  # fmt: skip
    response = page(request, "consent.html", shown)
    response.headers.update(consent_headers(asked.redirect_uri))
    return response


@router.post(CONSENT + "{secret}")
async def consent(
    request: Request,
    runtime: RuntimeDep,
    secret: Secret,
    decision: Annotated[str, Form(max_length=10)],
    role: Annotated[str, Form(max_length=20)] = "",
    csrf_token: Csrf = "",
) -> Response:
    """Approve (the grant, and the code sent to the client) or deny; either way the browser
    goes back to the client, once the decision is committed."""
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        if decision == "approve":
            target = await services.oauth.approve(secret, role)
        else:
            target = await services.oauth.deny(secret)
    return secured(RedirectResponse(target, status_code=303))


@router.get("/console/connections")
async def connections_page(request: Request, runtime: RuntimeDep) -> Response:
    """The clients connected over OAuth: this person's (an admin: the tenant's)."""
    async with services_of(request, runtime) as services:
        grants = await services.oauth.listed()
    return page(request, "connections.html", {"nav": "connections", "grants": grants})


@router.post("/console/connections/{grant_id:uuid}/revoke")
async def connection_revoke(
    request: Request, runtime: RuntimeDep, grant_id: UUID, csrf_token: Csrf = ""
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.oauth.revoke(grant_id)
    return back_to("/console/connections")
