"""Annotated dependencies: the caller, and its services over one unit of work per request.

Every dependency here is `async def`, even those that never await: FastAPI runs a plain
`def` dependency in a worker thread, one thread hop per dependency per request, for work
that takes microseconds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request

from app.domain.errors import UnauthorizedError
from app.domain.principal import Principal
from app.runtime import Runtime
from app.services.scope import Services, services_for


async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


# Where a key must never travel: URLs end up in logs, proxies and browser history.
_KEY_QUERY_PARAMS = ("api_key", "apikey", "key", "token", "access_token")


async def get_principal(request: Request, runtime: RuntimeDep) -> Principal:
    """The caller, authenticated (and rate-counted) once per request: a middleware that
    needed it first (idempotency, /mcp) leaves it in the request's state."""
    return await authenticate_request(request, runtime)


async def authenticate_request(
    request: Request, runtime: Runtime, resource: str | None = None
) -> Principal:
    """get_principal's work; `resource`: the OAuth resource this door is (/mcp's), whose
    access tokens it takes beside keys (app/services/auth.py)."""
    cached: Principal | None = getattr(request.state, "principal", None)
    if cached is not None:
        return cached
    if any(name in request.query_params for name in _KEY_QUERY_PARAMS):
        raise UnauthorizedError(
            "API keys are accepted only in the Authorization header, never in the URL"
        )
    header = request.headers.get("authorization")
    bearer = None
    if header is not None:
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise UnauthorizedError("use Authorization: Bearer <key>")
        # An empty bearer is no key: a client configured with `Bearer ${KEY:-}` (the Claude
        # Code plugin's .mcp.json) works in open mode, and gets 401 once keys are required.
        bearer = token.strip() or None
    address = request.client.host if request.client else None
    principal = await runtime.authenticator.authenticate(bearer, address, resource)
    request.state.principal = principal
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]


async def get_services(runtime: RuntimeDep, principal: PrincipalDep) -> AsyncIterator[Services]:
    # scope="function" (below): the transaction commits before the response is sent,
    # so a client never sees a 2xx for a write that then failed to commit.
    async with services_for(runtime, principal) as services:
        yield services


ServicesDep = Annotated[Services, Depends(get_services, scope="function")]
