"""Who a console request is for, and the forms' protection against cross-site requests.

The key typed at sign-in is kept in a session cookie (no expiry: gone when the browser
closes), HttpOnly so no script can read it, SameSite=Strict so no other site's page sends
it, and never in a URL. Each request authenticates it again, exactly like an API request,
so a revoked key signs the console out on the next click.

Every form carries a token that must match a second cookie (double submit): a page on
another origin can neither read the cookie nor set it, so it cannot forge the field."""

from __future__ import annotations

import hmac
import secrets

from fastapi import Request, Response

from app.domain.errors import AppError, ForbiddenError
from app.domain.principal import Principal
from app.runtime import Runtime

KEY_COOKIE = "agent_memory_console_key"
CSRF_COOKIE = "agent_memory_console_csrf"
CSRF_FIELD = "csrf_token"


async def signed_in(request: Request, runtime: Runtime) -> Principal | None:
    """The caller, or None when the console should ask for a key. In open mode (no keys
    exist) everyone is the open principal, as over the API."""
    key = request.cookies.get(KEY_COOKIE) or None
    try:
        address = request.client.host if request.client else None
        return await runtime.authenticator.authenticate(key, address)
    except AppError:
        return None


def csrf_token(request: Request) -> str:
    """This browser's token: the cookie's, or a new one (set_cookies stores it)."""
    token = request.cookies.get(CSRF_COOKIE)
    if token is None:
        token = getattr(request.state, "new_csrf", None) or secrets.token_urlsafe(32)
        request.state.new_csrf = token
    return token


def check_csrf(request: Request, sent: str) -> None:
    expected = request.cookies.get(CSRF_COOKIE)
    if not expected or not sent or not hmac.compare_digest(expected, sent):
        raise ForbiddenError("the form's security token is missing or stale: reload the page")


def _cookie(response: Response, request: Request, name: str, value: str) -> None:
    response.set_cookie(
        name,
        value,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )


def set_cookies(request: Request, response: Response, key: str | None = None) -> None:
    """The CSRF cookie when this request made a token, and the key after a sign-in."""
    token = getattr(request.state, "new_csrf", None)
    if token is not None:
        _cookie(response, request, CSRF_COOKIE, token)
    if key is not None:
        _cookie(response, request, KEY_COOKIE, key)


def sign_out(response: Response) -> None:
    response.delete_cookie(KEY_COOKIE, path="/")
