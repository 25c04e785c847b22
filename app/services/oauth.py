"""Remote MCP over OAuth 2.1: this server as its own authorization server, on the MCP SDK's
handlers (mcp.server.auth: authorize, token, register, revoke, the metadata documents; the
door is app/api/oauth.py). What they ask of a provider is here, kept in PostgreSQL (migration
0046), so that a grant survives a restart and reaches every worker:

- clients by Dynamic Client Registration (RFC 7591; a secret kept as its hash) or by Client
  ID Metadata Document (app/services/client_documents.py);
- an authorization request waits for a person's consent on the console (ConnectedClients
  below: the grant, a code, and its audit entry, in one transaction);
- a code is exchanged once, for a short-lived access token and a refresh token that rotates;
  a code or a refresh token used a second time revokes the grant (RFC 9700 §4.14);
- tokens are bound to this server's /mcp (RFC 8707); any other resource is `invalid_target`;
- every grant, refresh and revocation is in the grant's tenant's audit trail.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import InvalidScopeError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl, ConfigDict, ValidationError

from app.db.unit_of_work import UnitOfWork, unit_of_work
from app.domain.errors import InvalidInputError, NotFoundError
from app.domain.oauth import (
    ACCESS_TOKEN_PREFIX,
    CODE_TTL_S,
    MAX_REDIRECT_URIS,
    MAX_UNAPPROVED_CLIENTS,
    REFRESH_TOKEN_PREFIX,
    REQUEST_TTL_S,
    AuthorizationRequest,
    Grant,
    canonical_url,
    client_name,
    hash_secret,
    is_client_document_url,
    issuer_of,
    may_manage,
    new_secret,
    redirect_uri_problem,
    require_grantable,
    resource_of,
    same_redirect,
    scopes_asked,
)
from app.domain.principal import Principal
from app.repository.oauth import OAuthRepository
from app.runtime import Runtime
from app.services.audit import AuditTrail
from app.services.client_documents import ClientDocuments

logger = logging.getLogger("agent_memory.oauth")

# Where a person decides an authorization request (app/console/oauth.py); the request's
# secret follows.
CONSENT_PATH = "/console/oauth/"
# token_endpoint_auth_method a client may register with (no private_key_jwt: this server
# holds no client's key).
CLIENT_AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")


class RegisteredClient(OAuthClientInformationFull):
    """A client as the SDK's handlers see it. A loopback redirect URI matches on any port
    (RFC 8252 §7.3). Its scopes grant nothing (the role the person chose does), so any it
    asks for within bounds is accepted and echoed."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = [str(uri) for uri in self.redirect_uris or []]
        if redirect_uri is not None and any(
            same_redirect(str(redirect_uri), uri) for uri in registered
        ):
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)

    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        if requested_scope is None:
            return None
        try:
            return scopes_asked(requested_scope.split(" "))
        except InvalidInputError as exc:
            raise InvalidScopeError(exc.detail) from exc


class StoredCode(AuthorizationCode):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    grant: Grant


class StoredRefreshToken(RefreshToken):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    grant: Grant


class StoredAccessToken(AccessToken):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    grant: Grant


def _stamp(moment: datetime) -> int:
    return int(moment.timestamp())


class OAuthProvider:
    """The SDK's OAuthAuthorizationServerProvider, for one request to this server as
    `issuer` (its public origin): tokens are bound to the issuer's /mcp."""

    def __init__(self, runtime: Runtime, documents: ClientDocuments, issuer: str) -> None:
        self._runtime = runtime
        self._documents = documents
        self.issuer = issuer
        self.resource = resource_of(issuer)

    # Clients.

    async def get_client(self, client_id: str) -> RegisteredClient | None:
        if is_client_document_url(client_id):
            document = await self._documents.metadata(client_id)
            try:
                return None if document is None else RegisteredClient.model_validate(document)
            except ValidationError:
                logger.warning("client metadata document refused: not RFC 7591 metadata")
                return None
        async with self._runtime.database.connection() as conn:
            found = await OAuthRepository(conn).client(client_id)
        if found is None:
            return None
        secret_hash, metadata = found
        # The stored hash stands where the SDK looks for the secret; app/api/oauth.py
        # HashedSecrets compares what a client presents with it.
        return RegisteredClient.model_validate(
            {**metadata, "client_id": client_id, "client_secret": secret_hash}
        )

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        uris = [str(uri) for uri in client_info.redirect_uris or []]
        if len(uris) > MAX_REDIRECT_URIS:
            raise RegistrationError("invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS}")
        for uri in uris:
            if problem := redirect_uri_problem(uri):
                raise RegistrationError("invalid_redirect_uri", problem)
        if client_info.token_endpoint_auth_method not in CLIENT_AUTH_METHODS:
            raise RegistrationError(
                "invalid_client_metadata",
                f"token_endpoint_auth_method: one of {', '.join(CLIENT_AUTH_METHODS)}",
            )
        try:
            name = client_name(client_info.client_name, client_info.client_id)
            scopes_asked((client_info.scope or "").split())
        except InvalidInputError as exc:
            raise RegistrationError("invalid_client_metadata", exc.detail) from exc
        metadata = client_info.model_dump(
            mode="json", exclude_none=True, exclude={"client_id", "client_secret"}
        )
        secret = client_info.client_secret
        async with self._runtime.database.connection() as conn, conn.transaction():
            repo = OAuthRepository(conn)
            await repo.add_client(
                client_info.client_id,
                hash_secret(secret) if secret else None,
                {**metadata, "client_name": name},
            )
            await repo.forget_unapproved_beyond(MAX_UNAPPROVED_CLIENTS)

    # Authorization: the request waits for a person's decision on the console.

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        resource = params.resource or self.resource
        if canonical_url(resource) != canonical_url(self.resource):
            raise AuthorizeError(
                "invalid_target", f"this server issues tokens for {self.resource} only"
            )
        secret = new_secret()
        request = AuthorizationRequest(
            client_id=client.client_id,
            client_name=client.client_name or client.client_id,
            redirect_uri=str(params.redirect_uri),
            redirect_uri_explicit=params.redirect_uri_provided_explicitly,
            code_challenge=params.code_challenge,
            state=params.state,
            scopes=params.scopes or [],
            resource=self.resource,
            expires_at=datetime.now(UTC) + timedelta(seconds=REQUEST_TTL_S),
        )
        async with self._runtime.database.connection() as conn:
            await OAuthRepository(conn).open_request(hash_secret(secret), request)
        return CONSENT_PATH + secret

    # Codes.

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> StoredCode | None:
        async with self._runtime.database.connection() as conn:
            code = await OAuthRepository(conn).code(hash_secret(authorization_code))
        if code is None or code.grant.revoked_at is not None:
            return None
        if code.used:
            await self._revoke_reused(code.grant, "an authorization code was used twice")
            return None
        return StoredCode(
            code=authorization_code,
            scopes=code.grant.scopes,
            expires_at=code.expires_at.timestamp(),
            client_id=code.client_id,
            code_challenge=code.code_challenge,
            redirect_uri=code.redirect_uri,  # validated as AnyUrl
            redirect_uri_provided_explicitly=code.redirect_uri_explicit,
            resource=code.grant.resource,
            grant=code.grant,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: StoredCode
    ) -> OAuthToken:
        async with self._runtime.database.connection() as conn, conn.transaction():
            repo = OAuthRepository(conn)
            if not await repo.use_code(hash_secret(authorization_code.code)):
                raise TokenError("invalid_grant", "the authorization code was used or expired")
            return await self._issue(repo, authorization_code.grant)

    # Refresh tokens: each exchange rotates it.

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> StoredRefreshToken | None:
        async with self._runtime.database.connection() as conn:
            token = await OAuthRepository(conn).token(hash_secret(refresh_token), "refresh")
        if token is None or not token.live:
            return None
        if token.rotated:
            await self._revoke_reused(token.grant, "a refresh token was used twice")
            return None
        return StoredRefreshToken(
            token=refresh_token,
            client_id=token.grant.client_id,
            scopes=token.grant.scopes,
            expires_at=_stamp(token.expires_at),
            resource=token.grant.resource,
            grant=token.grant,
        )

    async def exchange_refresh_token(
        self,
        client: OAuthClientInformationFull,
        refresh_token: StoredRefreshToken,
        scopes: list[str],
    ) -> OAuthToken:
        grant = refresh_token.grant
        async with self._in_tenant(grant) as (repo, trail):
            if not await repo.rotate(hash_secret(refresh_token.token)):
                raise TokenError("invalid_grant", "the refresh token was used or expired")
            issued = await self._issue(repo, grant)
            await trail.record("oauth_refresh", detail=grant.detail, memory_ids=[])
        return issued

    # Access tokens (what /mcp accepts is app/services/auth.py's; this is for revocation).

    async def load_access_token(self, token: str) -> StoredAccessToken | None:
        async with self._runtime.database.connection() as conn:
            found = await OAuthRepository(conn).token(hash_secret(token), "access")
        if found is None or not found.live:
            return None
        return StoredAccessToken(
            token=token,
            client_id=found.grant.client_id,
            scopes=found.grant.scopes,
            expires_at=_stamp(found.expires_at),
            resource=found.grant.resource,
            grant=found.grant,
        )

    async def revoke_token(self, token: StoredAccessToken | StoredRefreshToken) -> None:
        """RFC 7009 from the client itself: the whole grant, as a disconnect."""
        grant = token.grant
        async with self._in_tenant(grant) as (repo, trail):
            if await repo.revoke(grant.tenant_id, grant.id) is not None:
                detail = {**grant.detail, "by": "the client (RFC 7009)"}
                await trail.record("oauth_revoke", detail=detail, memory_ids=[])

    async def exchange_identity_assertion(self, client: Any, params: Any) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "no identity assertion grant here")

    # Within the provider.

    async def _issue(self, repo: OAuthRepository, grant: Grant) -> OAuthToken:
        settings = self._runtime.settings
        now = datetime.now(UTC)
        access, refresh = new_secret(ACCESS_TOKEN_PREFIX), new_secret(REFRESH_TOKEN_PREFIX)
        await repo.add_tokens(
            grant.id,
            hash_secret(access),
            now + timedelta(seconds=settings.oauth_access_token_ttl_s),
            hash_secret(refresh),
            now + timedelta(seconds=settings.oauth_refresh_token_ttl_s),
        )
        return OAuthToken(
            access_token=access,
            expires_in=settings.oauth_access_token_ttl_s,
            refresh_token=refresh,
            scope=" ".join(grant.scopes) or None,
        )

    async def _revoke_reused(self, grant: Grant, why: str) -> None:
        """A code or refresh token presented again: someone other than the client may hold
        it, so every token of the grant ends (the person approves the client again)."""
        logger.warning("%s: grant %s revoked", why, grant.id)
        async with self._in_tenant(grant) as (repo, trail):
            if await repo.revoke(grant.tenant_id, grant.id) is not None:
                await trail.record(
                    "oauth_revoke", detail={**grant.detail, "by": why}, memory_ids=[]
                )

    @asynccontextmanager
    async def _in_tenant(self, grant: Grant) -> AsyncIterator[tuple[OAuthRepository, AuditTrail]]:
        """The grant's tenant's transaction, its audit entries the client's (the grant's)."""
        async with unit_of_work(
            self._runtime.database, grant.tenant_id, key_id=grant.id, person_id=grant.person_id
        ) as uow:
            yield OAuthRepository(await uow.connection()), AuditTrail(uow, grant.principal)


class ConnectedClients:
    """The console's side: a person's decision on an authorization request, and the
    connected clients a person (or an admin, the tenant's) sees and revokes."""

    def __init__(self, uow: UnitOfWork, principal: Principal) -> None:
        self._uow = uow
        self._principal = principal
        self._trail = AuditTrail(uow, principal)

    async def _repo(self) -> OAuthRepository:
        return OAuthRepository(await self._uow.connection())

    async def pending(self, secret: str) -> AuthorizationRequest:
        request = await (await self._repo()).request(hash_secret(secret))
        if request is None:
            raise _gone()
        return request

    async def approve(self, secret: str, role: str) -> str:
        """The grant, its code and its audit entry; where the browser goes next (the
        client's redirect URI with the code, the state and this issuer, RFC 9207)."""
        require_grantable(self._principal, role)
        repo = await self._repo()
        request = await repo.close_request(hash_secret(secret))
        if request is None:
            raise _gone()
        assert self._principal.key_id is not None  # require_grantable: never open mode
        grant = await repo.add_grant(
            self._principal.tenant_id,
            self._principal.person_id,
            self._principal.key_id,
            request,
            role,
        )
        code = new_secret()
        expires = datetime.now(UTC) + timedelta(seconds=CODE_TTL_S)
        await repo.add_code(hash_secret(code), grant.id, request, expires)
        detail = {**grant.detail, "redirect_uri": request.redirect_uri}
        await self._trail.record("oauth_grant", detail=detail, memory_ids=[])
        return construct_redirect_uri(
            request.redirect_uri, code=code, state=request.state, iss=issuer_of(request.resource)
        )

    async def deny(self, secret: str) -> str:
        request = await (await self._repo()).close_request(hash_secret(secret))
        if request is None:
            raise _gone()
        return construct_redirect_uri(
            request.redirect_uri,
            error="access_denied",
            error_description="the person did not approve this client",
            state=request.state,
            iss=issuer_of(request.resource),
        )

    async def listed(self) -> list[Grant]:
        grants = await (await self._repo()).grants(self._principal.tenant_id)
        return [g for g in grants if may_manage(self._principal, g)]

    async def revoke(self, grant_id: UUID) -> Grant:
        repo = await self._repo()
        grant = await repo.grant(self._principal.tenant_id, grant_id)
        if grant is None or not may_manage(self._principal, grant):
            raise NotFoundError(f"no connected client {grant_id}")
        revoked = await repo.revoke(grant.tenant_id, grant.id)
        if revoked is None:
            return grant  # already revoked: nothing to record
        await self._trail.record("oauth_revoke", detail=grant.detail, memory_ids=[])
        return revoked


def _gone() -> NotFoundError:
    return NotFoundError(
        "this authorization request is unknown, already decided or expired: start connecting"
        " again from the client"
    )


async def forget_expired_quietly(runtime: Runtime) -> None:
    """The schedule's: codes, tokens and requests no one can use any more, and clients no
    one approved (app/repository/oauth.py forget_expired)."""
    try:
        async with runtime.database.connection() as conn:
            await OAuthRepository(conn).forget_expired(runtime.settings.oauth_unused_client_days)
    except Exception:
        logger.warning("forgetting expired OAuth codes and tokens failed", exc_info=True)
