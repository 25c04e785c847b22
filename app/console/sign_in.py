"""The sign-in page (a key, or the team's identity provider: oidc.py) and signing out. Who
is signed in, and the cookies that say so, are auth.py's."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Query, Request, Response

from app.console.auth import (
    KEY_COOKIE,
    Csrf,
    after_sign_in,
    check_csrf,
    set_cookies,
    sign_out,
    signed_in,
)
from app.console.pages import RuntimeDep, back_to, console_router, page
from app.domain.errors import AppError

router = console_router()


@router.get("/console/sign-in")
async def sign_in_page(
    request: Request,
    runtime: RuntimeDep,
    next_page: Annotated[str, Query(alias="next", max_length=300)] = "",
) -> Response:
    """`next`: where to go once signed in (a client's consent page), on this console only."""
    principal = await signed_in(request, runtime)
    if principal is not None and request.cookies.get(KEY_COOKIE):
        return back_to(after_sign_in(next_page))
    shown = {
        "open": principal is not None,
        "next": after_sign_in(next_page),
        "provider": runtime.identity_provider,
    }
    return page(request, "sign_in.html", shown)


@router.post("/console/sign-in")
async def sign_in(
    request: Request,
    runtime: RuntimeDep,
    api_key: Annotated[str, Form(max_length=200)],
    csrf_token: Csrf = "",
    next_page: Annotated[str, Form(alias="next", max_length=300)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    try:
        address = request.client.host if request.client else None
        principal = await runtime.authenticator.authenticate(api_key.strip() or None, address)
    except AppError as exc:
        shown = {
            "error": exc.detail,
            "next": after_sign_in(next_page),
            "provider": runtime.identity_provider,
        }
        return page(request, "sign_in.html", shown, exc.status)
    response = back_to(after_sign_in(next_page))
    set_cookies(request, response, key=api_key.strip())
    request.state.principal = principal
    return response


@router.post("/console/sign-out")
async def sign_out_now(request: Request, runtime: RuntimeDep, csrf_token: Csrf = "") -> Response:
    check_csrf(request, csrf_token)
    response = back_to("/console/sign-in")
    await sign_out(request, response, runtime)
    return response
