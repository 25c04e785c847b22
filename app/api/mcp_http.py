"""MCP over streamable HTTP at /mcp: the same keys as REST, and a connected client's OAuth
access token (app/api/oauth.py); the tools run for the key's or the grant's tenant and
role, and where a bridge says the agent works (agent_memory_client.protocol). A 401 names
the protected resource's metadata, where an OAuth client starts (RFC 9728 §5.1)."""

from __future__ import annotations

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from app.api.deps import authenticate_request
from app.api.errors import app_error_response
from app.api.oauth import bearer_challenge, issuer_of_request
from app.domain.errors import AppError
from app.domain.oauth import resource_of
from app.mcp.server import current_principal
from app.mcp.surface import current_workspace, workspace_of


class AuthenticatedMcp:
    """/mcp takes the same keys as REST: the tools run for the key's tenant and role.
    (An ASGI class, so the router hands it the raw scope.)"""

    def __init__(self, mcp_asgi: StreamableHTTPASGIApp) -> None:
        self._mcp = mcp_asgi

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        resource = resource_of(issuer_of_request(request))
        try:
            principal = await authenticate_request(request, request.app.state.runtime, resource)
        except AppError as exc:
            response = await app_error_response(request, exc)
            if exc.status == 401:
                response.headers["WWW-Authenticate"] = bearer_challenge(request)
            await response(scope, receive, send)
            return
        token = current_principal.set(principal)
        place = current_workspace.set(workspace_of(request.headers))
        try:
            await self._mcp(scope, receive, send)
        finally:
            current_workspace.reset(place)
            current_principal.reset(token)
