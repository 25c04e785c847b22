"""The OAuth 2.1 endpoints a remote MCP client uses (the MCP authorization spec, 2025-11-25),
on the MCP SDK's own handlers (mcp.server.auth.handlers): the protected resource's metadata
(RFC 9728; /mcp's 401 points at it), the authorization server's (RFC 8414), /authorize
(PKCE S256 only), /token, /register (RFC 7591) and /revoke (RFC 7009). What they keep and
decide is app/services/oauth.py's; the person's consent is the console's
(app/console/oauth.py).

The issuer is PUBLIC_URL, or the origin the request reached (app/domain/oauth.py
public_origin); every token is bound to its /mcp."""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import unquote

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.handlers.token import TokenErrorResponse, TokenHandler
from mcp.server.auth.json_response import PydanticJSONResponse
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.provider import construct_redirect_uri
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.server.transport_security import RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, ProtectedResourceMetadata
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, request_response

from app.domain.oauth import (
    AUTHORIZATION_SERVER_PATH,
    MAX_REQUEST_BYTES,
    MCP_PATH,
    PROTECTED_RESOURCE_PATH,
    canonical_url,
    hash_secret,
    new_secret,
    public_origin,
    resource_metadata_url,
    resource_of,
)
from app.runtime import Runtime
from app.services.client_documents import ClientDocuments
from app.services.oauth import CLIENT_AUTH_METHODS, CONSENT_PATH, OAuthProvider

# The metadata documents change only with the configuration.
METADATA_CACHE = {"Cache-Control": "public, max-age=3600"}
REGISTRATION = ClientRegistrationOptions(enabled=True)


def issuer_of_request(request: Request) -> str:
    """This server's public origin for the request (PUBLIC_URL, else where it arrived)."""
    runtime: Runtime = request.app.state.runtime
    return public_origin(runtime.settings.public_url or None, str(request.base_url))


def bearer_challenge(request: Request) -> str:
    """The WWW-Authenticate a 401 from /mcp carries (RFC 9728 §5.1): where the resource's
    metadata is; `invalid_token` when a credential was sent (RFC 6750 §3)."""
    challenge = f'Bearer resource_metadata="{resource_metadata_url(issuer_of_request(request))}"'
    if request.headers.get("authorization"):
        challenge += ', error="invalid_token"'
    return challenge


def protected_resource(issuer: str) -> ProtectedResourceMetadata:
    return ProtectedResourceMetadata.model_validate(
        {
            "resource": resource_of(issuer),
            "authorization_servers": [issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "agent-memory",
        }
    )


def authorization_server(issuer: str, client_documents: bool) -> OAuthMetadata:
    """RFC 8414, as the SDK's build_metadata makes it, with what this server adds: public
    clients (none), Client ID Metadata Documents (unless OAUTH_CLIENT_DOCUMENTS is off), and
    `iss` on the redirect (RFC 9207)."""
    return OAuthMetadata.model_validate(
        {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "registration_endpoint": f"{issuer}/register",
            "revocation_endpoint": f"{issuer}/revoke",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": list(CLIENT_AUTH_METHODS),
            "revocation_endpoint_auth_methods_supported": list(CLIENT_AUTH_METHODS),
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": client_documents,
            "authorization_response_iss_parameter_supported": True,
        }
    )


@dataclass
class BoundTokenHandler(TokenHandler):
    """The SDK's token endpoint, refusing a `resource` other than this server's /mcp (RFC
    8707 §2: `invalid_target`) before it issues anything."""

    resource: str = ""

    async def handle(self, request: Request) -> Response:
        asked = (await request.form()).get("resource")  # the SDK reads the same, cached
        if isinstance(asked, str) and canonical_url(asked) != canonical_url(self.resource):
            refusal = TokenErrorResponse(
                error="invalid_target",
                error_description=f"this server issues tokens for {self.resource} only",
            )
            response: Response = self.response(refusal)
            return response
        handled: Response = await super().handle(request)
        return handled


class HashedSecrets(ClientAuthenticator):
    """The SDK's client authentication, against a client secret kept only as its hash: the
    client as the SDK compares it carries the presented secret when its hash matches the
    stored one, else a secret no one presented."""

    def __init__(self, provider: OAuthProvider) -> None:
        super().__init__(provider)
        self._stored = provider

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        self.provider = cast(Any, _AsPresented(self._stored, await presented_secret(request)))
        return await super().authenticate_request(request)


class _AsPresented:
    def __init__(self, provider: OAuthProvider, presented: str | None) -> None:
        self._provider = provider
        self._presented = presented

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        client = await self._provider.get_client(client_id)
        if client is None or client.client_secret is None:
            return client
        matches = self._presented is not None and hmac.compare_digest(
            hash_secret(self._presented).encode(), client.client_secret.encode()
        )
        secret = self._presented if matches else new_secret()
        return client.model_copy(update={"client_secret": secret})


async def presented_secret(request: Request) -> str | None:
    """The client secret a token or revocation request carries: HTTP Basic (RFC 6749
    §2.3.1, its parts form-encoded), else the form's client_secret."""
    header = request.headers.get("authorization", "")
    if header.startswith("Basic "):
        try:
            decoded = base64.b64decode(header[6:], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
        return unquote(decoded.partition(":")[2]) if ":" in decoded else None
    sent = (await request.form()).get("client_secret")
    return sent if isinstance(sent, str) else None


def oauth_routes(documents: ClientDocuments) -> list[BaseRoute]:
    """The routes, each handler built per request for the request's issuer."""

    def provider(request: Request) -> OAuthProvider:
        return OAuthProvider(request.app.state.runtime, documents, issuer_of_request(request))

    async def resource_metadata(request: Request) -> Response:
        document = protected_resource(issuer_of_request(request))
        return PydanticJSONResponse(document, headers=METADATA_CACHE)

    async def server_metadata(request: Request) -> Response:
        document = authorization_server(issuer_of_request(request), documents.enabled)
        return PydanticJSONResponse(document, headers=METADATA_CACHE)

    async def authorize(request: Request) -> Response:
        bound = provider(request)
        response = await AuthorizationHandler(bound).handle(request)
        # An error sent back to the client names this issuer too (RFC 9207 §2), as a code
        # does (app/services/oauth.py ConnectedClients).
        location = response.headers.get("location")
        if location is not None and not location.startswith(CONSENT_PATH):
            response.headers["location"] = construct_redirect_uri(location, iss=bound.issuer)
        return response

    async def token(request: Request) -> Response:
        bound = provider(request)
        handler = BoundTokenHandler(bound, HashedSecrets(bound), resource=bound.resource)
        return await handler.handle(request)

    async def register(request: Request) -> Response:
        return await RegistrationHandler(provider(request), REGISTRATION).handle(request)

    async def revoke(request: Request) -> Response:
        bound = provider(request)
        return await RevocationHandler(bound, HashedSecrets(bound)).handle(request)

    def limited(endpoint: Callable[[Request], Awaitable[Response]]) -> Any:
        return RequestBodyLimitMiddleware(request_response(endpoint), MAX_REQUEST_BYTES)

    return [
        # RFC 9728 §3.1: at the well-known path then the resource's; at the bare one too,
        # for clients that look there first.
        Route(PROTECTED_RESOURCE_PATH + MCP_PATH, resource_metadata, methods=["GET"]),
        Route(PROTECTED_RESOURCE_PATH, resource_metadata, methods=["GET"]),
        Route(AUTHORIZATION_SERVER_PATH, server_metadata, methods=["GET"]),
        Route("/authorize", limited(authorize), methods=["GET", "POST"]),
        Route("/token", limited(token), methods=["POST"]),
        Route("/register", limited(register), methods=["POST"]),
        Route("/revoke", limited(revoke), methods=["POST"]),
    ]
