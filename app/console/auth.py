"""Who a console request is for, and the forms' protection against cross-site requests
(the sign-in page itself is sign_in.py's).

The key typed at sign-in (or, signed in through the team's identity provider, a session's
random id: app/services/oidc.py) is kept in a session cookie (no expiry: gone when the browser
closes), HttpOnly so no script can read it, SameSite=Strict so no other site's page sends
it, and never in a URL. Each request authenticates it again, exactly like an API request,
so a revoked key signs the console out on the next click; a session is looked up again the
same way (its person removed, or their last key revoked, signs it out on the next click).

Every form carries a token made from a second cookie (a random nonce) and the signed-in key:
a page on another origin can read neither cookie, so it cannot forge the field, and a token
from another session (another key, or a nonce planted by a sibling host) does not pass.
Signing in starts a new nonce. The request guard (app/api/request_guard.py) refuses a
cross-origin form before it gets here."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Annotated

from fastapi import Form, Request, Response

from app.domain.errors import AppError, ForbiddenError
from app.domain.oidc import is_session_id
from app.domain.principal import Principal
from app.runtime import Runtime
from app.services.oidc import ConsoleSessions

KEY_COOKIE = "agent_memory_console_key"
CSRF_COOKIE = "agent_memory_console_csrf"
CSRF_FIELD = "csrf_token"
# The field every form sends it in (named CSRF_FIELD); absent, check_csrf refuses it.
Csrf = Annotated[str, Form(max_length=100)]


async def signed_in(request: Request, runtime: Runtime) -> Principal | None:
    """The caller, or None when the console should ask for a key. In open mode (no keys
    exist) everyone is the open principal, as over the API."""
    key = request.cookies.get(KEY_COOKIE) or None
    if key is not None and is_session_id(key):
        return await ConsoleSessions(runtime.database).principal(key)
    try:
        address = request.client.host if request.client else None
        return await runtime.authenticator.authenticate(key, address)
    except AppError:
        return None


def _bound(nonce: str, request: Request) -> str:
    """The form token: this browser's nonce bound to the key it signed in with, so a token
    (or a nonce cookie planted by a sibling host) from any other session does not pass."""
    key = request.cookies.get(KEY_COOKIE, "")
    return hmac.new(nonce.encode(), key.encode(), hashlib.sha256).hexdigest()


def csrf_token(request: Request) -> str:
    """This browser's token for its forms: from the nonce cookie, or a new nonce
    (set_cookies stores it)."""
    nonce = request.cookies.get(CSRF_COOKIE)
    if nonce is None:
        nonce = getattr(request.state, "new_csrf", None) or secrets.token_urlsafe(32)
        request.state.new_csrf = nonce
    return _bound(nonce, request)


def check_csrf(request: Request, sent: str) -> None:
    nonce = request.cookies.get(CSRF_COOKIE)
    if not nonce or not sent or not hmac.compare_digest(_bound(nonce, request), sent):
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
    """The nonce cookie when this request made one, and the key or session id (with a new
    nonce) after a sign-in."""
    nonce = getattr(request.state, "new_csrf", None)
    if key is not None:
        nonce = secrets.token_urlsafe(32)  # a new session, a new nonce
        _cookie(response, request, KEY_COOKIE, key)
    if nonce is not None:
        _cookie(response, request, CSRF_COOKIE, nonce)


def after_sign_in(path: str) -> str:
    """Where a sign-in leads: `path` when it is a page of this console (a client's consent
    page sends the person to sign in and back), else the search page; never another site."""
    local = path.startswith("/") and not path.startswith(("//", "/\\")) and "\\" not in path
    return path if local and path.isprintable() and " " not in path else "/"


async def sign_out(request: Request, response: Response, runtime: Runtime) -> None:
    """The cookie gone, and a session's row with it (the id is worth nothing after)."""
    key = request.cookies.get(KEY_COOKIE)
    if key is not None:
        await ConsoleSessions(runtime.database).end(key)
    response.delete_cookie(KEY_COOKIE, path="/")
