"""Sign in with the team's identity provider (OpenID Connect): the sign-in page's button
leads to /console/oidc/start, which sends the browser to the provider with this browser's
state, nonce and PKCE challenge (app/domain/oidc.py); the provider sends it back to
/console/oidc/callback, where the code becomes a verified identity and the identity a
console session (app/services/oidc.py). Without OIDC_ISSUER both answer 404."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request, Response
from fastapi.responses import RedirectResponse

from app.console.auth import after_sign_in, set_cookies
from app.console.pages import RuntimeDep, console_router, page, secured
from app.domain.errors import NotFoundError, UnauthorizedError
from app.domain.oauth import public_origin
from app.domain.oidc import (
    CALLBACK_PATH,
    FLOW_TTL_S,
    START_PATH,
    check_state,
    flow_of,
    new_flow_secret,
)
from app.runtime import Runtime
from app.services.oidc import ConsoleSessions, IdentityProvider

router = console_router()

# This browser's sign-in in flight, and where it leads after. SameSite=Lax, not Strict: the
# provider's redirect back is a navigation from its site, which a Strict cookie would miss.
FLOW_COOKIE = "agent_memory_console_oidc"
NEXT_COOKIE = "agent_memory_console_oidc_next"
Param = Annotated[str, Query(max_length=2000)]


def _provider(runtime: Runtime) -> IdentityProvider:
    provider = runtime.identity_provider
    if not isinstance(provider, IdentityProvider):
        raise NotFoundError("this server signs in with keys only (OIDC_ISSUER is not set)")
    return provider


def _redirect_uri(request: Request, runtime: Runtime) -> str:
    return public_origin(runtime.settings.public_url or None, str(request.base_url)) + (
        CALLBACK_PATH
    )


def _flow_cookie(response: Response, request: Request, name: str, value: str) -> None:
    response.set_cookie(
        name,
        value,
        max_age=FLOW_TTL_S,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path=CALLBACK_PATH,
    )


@router.get(START_PATH)
async def start(
    request: Request,
    runtime: RuntimeDep,
    next_page: Annotated[str, Query(alias="next", max_length=300)] = "",
) -> Response:
    provider = _provider(runtime)
    secret = new_flow_secret()
    try:
        url = await provider.authorization_url(_redirect_uri(request, runtime), flow_of(secret))
    except UnauthorizedError as exc:
        return _refused(request, runtime, exc.detail, next_page)
    response = secured(RedirectResponse(url, status_code=303))
    _flow_cookie(response, request, FLOW_COOKIE, secret)
    _flow_cookie(response, request, NEXT_COOKIE, after_sign_in(next_page))
    return response


@router.get(CALLBACK_PATH)
async def callback(
    request: Request,
    runtime: RuntimeDep,
    code: Param = "",
    state: Param = "",
    error: Param = "",
    error_description: Param = "",
) -> Response:
    """The provider's answer: a code for this browser's sign-in, or its refusal."""
    provider = _provider(runtime)
    next_page = after_sign_in(request.cookies.get(NEXT_COOKIE, ""))
    try:
        if error:
            said = f"{error}: {error_description}" if error_description else error
            raise UnauthorizedError(f"the identity provider did not sign you in ({said})")
        flow = check_state(request.cookies.get(FLOW_COOKIE), state)
        if not code:
            raise UnauthorizedError("the identity provider sent no code: start again")
        claims = await provider.identify(code, _redirect_uri(request, runtime), flow)
        signed = await ConsoleSessions(runtime.database).start(claims, provider.settings)
    except UnauthorizedError as exc:
        return _refused(request, runtime, exc.detail, next_page)
    # A page of this site leads on, not a redirect: the session cookie is SameSite=Strict,
    # which a browser leaves off a redirect chain the provider's site started.
    shown = {"person": signed.person_name, "role": signed.role, "next": next_page}
    response = page(request, "signed_in.html", shown)
    set_cookies(request, response, key=signed.session_id)
    _forget_flow(response)
    return response


def _forget_flow(response: Response) -> None:
    for name in (FLOW_COOKIE, NEXT_COOKIE):
        response.delete_cookie(name, path=CALLBACK_PATH)


def _refused(request: Request, runtime: Runtime, why: str, next_page: str) -> Response:
    shown = {"error": why, "next": after_sign_in(next_page), "provider": runtime.identity_provider}
    response = page(request, "sign_in.html", shown, 401)
    _forget_flow(response)
    return response
