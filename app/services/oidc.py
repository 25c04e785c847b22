"""Signing in to the console with the team's identity provider (OpenID Connect; the rules in
app/domain/oidc.py). The provider's discovery document and keys are read once and kept
(the keys again when a token names one not seen yet); the authorization code is exchanged
with PKCE by authlib's client; the ID token is verified with joserfc. A person it names
gets a console session: a random id in the browser, its hash in PostgreSQL
(console_sessions), checked again on every request."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import httpx
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.oauth2.rfc6749.errors import OAuth2Error
from joserfc.jws import extract_compact

from app.config import Settings
from app.db.unit_of_work import Database, unit_of_work
from app.domain.errors import UnauthorizedError
from app.domain.oidc import (
    SCOPES,
    Flow,
    hash_session_id,
    highest_role,
    is_session_id,
    new_session_id,
    person_named_by,
    session_role,
    verified_claims,
)
from app.domain.principal import Principal
from app.repository.console_sessions import ConsoleSessionRepository
from app.repository.people import PeopleRepository
from app.services.audit import AuditTrail

logger = logging.getLogger("agent_memory.oidc")

# Seconds a call to the provider may take (a sign-in waits on it).
PROVIDER_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    issuer: str
    client_id: str
    client_secret: str = field(repr=False)  # never in a log or a repr
    name_claim: str
    tenant_id: str
    display_name: str
    session_ttl: timedelta


@dataclass(frozen=True, slots=True)
class SignedIn:
    session_id: str
    person_name: str
    role: str


class IdentityProvider:
    """One provider, for every request of this process."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self._metadata: dict[str, Any] | None = None
        self._jwks: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.settings.display_name

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            async with httpx.AsyncClient(timeout=PROVIDER_TIMEOUT_S) as client:
                response = await client.get(url)
                response.raise_for_status()
                found = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            logger.warning("identity provider unreachable: %s: %s", url, exc)
            raise UnauthorizedError(
                "the identity provider cannot be reached now: try again, or sign in with a key"
            ) from exc
        if not isinstance(found, dict):
            raise UnauthorizedError(f"the identity provider's {url} is not a JSON object")
        return found

    async def metadata(self) -> dict[str, Any]:
        """The provider's discovery document, which must name the configured issuer."""
        if self._metadata is None:
            issuer = self.settings.issuer.rstrip("/")
            found = await self._get_json(issuer + "/.well-known/openid-configuration")
            if found.get("issuer") != self.settings.issuer:
                raise UnauthorizedError(
                    f"the identity provider says its issuer is {found.get('issuer')!r}, not"
                    f" OIDC_ISSUER {self.settings.issuer!r}: an admin corrects OIDC_ISSUER"
                )
            self._metadata = found
        return self._metadata

    async def _keys(self, kid: str | None) -> dict[str, Any]:
        """The provider's JWKS; read again once when a token names a key not in it (the
        provider rotated its keys)."""
        known = self._jwks is not None and any(
            key.get("kid") == kid for key in self._jwks.get("keys", [])
        )
        if self._jwks is None or (kid is not None and not known):
            self._jwks = await self._get_json(str((await self.metadata())["jwks_uri"]))
        return self._jwks

    def _client(self, redirect_uri: str) -> AsyncOAuth2Client:
        secret = self.settings.client_secret
        return AsyncOAuth2Client(
            client_id=self.settings.client_id,
            client_secret=secret or None,
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
            scope=SCOPES,
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            timeout=PROVIDER_TIMEOUT_S,
        )

    async def authorization_url(self, redirect_uri: str, flow: Flow) -> str:
        endpoint = str((await self.metadata())["authorization_endpoint"])
        async with self._client(redirect_uri) as client:
            url, _ = client.create_authorization_url(
                endpoint, state=flow.state, code_verifier=flow.code_verifier, nonce=flow.nonce
            )
        return str(url)

    async def identify(self, code: str, redirect_uri: str, flow: Flow) -> dict[str, Any]:
        """The verified claims of the person the provider signed in, for this code."""
        endpoint = str((await self.metadata())["token_endpoint"])
        try:
            async with self._client(redirect_uri) as client:
                token = await client.fetch_token(
                    endpoint, code=code, code_verifier=flow.code_verifier, state=flow.state
                )
        except (OAuth2Error, httpx.HTTPError) as exc:
            logger.warning("identity provider refused the code: %s", exc)
            raise UnauthorizedError(
                f"the identity provider refused this sign-in's code: {exc}: start again"
            ) from exc
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise UnauthorizedError("the identity provider sent no ID token (is it OpenID?)")
        try:
            kid = extract_compact(id_token.encode()).protected.get("kid")
        except Exception as exc:  # joserfc's DecodeError and friends: malformed
            raise UnauthorizedError("the identity provider's ID token is malformed") from exc
        claims = verified_claims(
            id_token,
            await self._keys(kid),
            self.settings.issuer,
            self.settings.client_id,
            flow.nonce,
        )
        if self.settings.name_claim not in claims:
            claims = await self._with_userinfo(claims, token.get("access_token"))
        return claims

    async def _with_userinfo(self, claims: dict[str, Any], access_token: Any) -> dict[str, Any]:
        """The ID token's claims and the userinfo endpoint's (where a provider keeps
        `email` and the like, OIDC Core 5.4), for the same subject; the ID token's win."""
        endpoint = (await self.metadata()).get("userinfo_endpoint")
        if not isinstance(endpoint, str) or not isinstance(access_token, str):
            return claims
        try:
            async with httpx.AsyncClient(timeout=PROVIDER_TIMEOUT_S) as client:
                response = await client.get(
                    endpoint, headers={"Authorization": f"Bearer {access_token}"}
                )
                response.raise_for_status()
                userinfo = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            logger.warning("identity provider's userinfo failed: %s", exc)
            raise UnauthorizedError(
                "the identity provider did not say who you are (its userinfo failed): try again"
            ) from exc
        if not isinstance(userinfo, dict) or userinfo.get("sub") != claims["sub"]:
            raise UnauthorizedError("the identity provider's userinfo is about someone else")
        return {**userinfo, **claims}


def _acting_key(keys: list[tuple[UUID, str]], role: str) -> UUID:
    """The key a session acts through (the audit trail names it): one of its role, else the
    highest (a session signed in as agent when the person holds admin keys only)."""
    of_role = [key_id for key_id, key_role in keys if key_role == role]
    best = highest_role([key_role for _, key_role in keys])
    return of_role[0] if of_role else next(k for k, r in keys if r == best)


class ConsoleSessions:
    """Sessions of people signed in through the provider; on the database's plain
    connections (no tenant yet when a request starts)."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def start(self, claims: dict[str, Any], settings: ProviderSettings) -> SignedIn:
        """A session for the present person the claims name, with the highest role of their
        active keys, and the sign-in in their tenant's audit trail; refused, saying why,
        for anyone else."""
        name = person_named_by(claims, settings.name_claim)
        async with self._database.connection() as conn:
            person = await PeopleRepository(conn).named(settings.tenant_id, name)
            if person is None:
                raise UnauthorizedError(
                    f"no one named {name!r} is on this server's team: an admin adds you with"
                    f" `agent-memory people add {name}` and makes you a key"
                )
            keys = await ConsoleSessionRepository(conn).active_keys(person.tenant_id, person.id)
        role = highest_role([role for _, role in keys])
        if role is None:
            raise UnauthorizedError(
                f"{name} has no active key, which decides what a person may do here: an"
                f" admin makes one with `agent-memory keys create --person {name} ...`"
            )
        principal = Principal(person.tenant_id, role, _acting_key(keys, role), person.id)
        session_id = new_session_id()
        async with unit_of_work(
            self._database, person.tenant_id, principal.key_id, person.id
        ) as uow:
            sessions = ConsoleSessionRepository(await uow.connection())
            await sessions.delete_expired()
            await sessions.add(
                hash_session_id(session_id),
                person.tenant_id,
                person.id,
                role,
                datetime.now(UTC) + settings.session_ttl,
            )
            detail = {"person": str(person.id), "name": name, "role": role,
                      "issuer": settings.issuer, "subject": str(claims["sub"])}  # fmt: skip
            await AuditTrail(uow, principal).record("console_sign_in", detail=detail, memory_ids=[])
        logger.info("console sign-in through the identity provider: %s as %s", name, role)
        return SignedIn(session_id, name, role)

    async def principal(self, session_id: str) -> Principal | None:
        """Who the session acts for now: its person, with the role they signed in with or
        less (their keys now decide), acting through their best active key; None when it
        ended, expired, or the person was removed or has no active key left."""
        if not is_session_id(session_id):
            return None
        async with self._database.connection() as conn:
            found = await ConsoleSessionRepository(conn).get(hash_session_id(session_id))
        if found is None:
            return None
        role = session_role(found.role, [role for _, role in found.keys])
        if role is None:
            return None
        return Principal(found.tenant_id, role, _acting_key(found.keys, role), found.person_id)

    async def end(self, session_id: str) -> None:
        if is_session_id(session_id):
            async with self._database.connection() as conn:
                await ConsoleSessionRepository(conn).delete(hash_session_id(session_id))


def identity_provider(settings: Settings) -> IdentityProvider | None:
    """The configured provider, or None (OIDC_ISSUER unset: the console takes keys only)."""
    if not settings.oidc_issuer:
        return None
    return IdentityProvider(
        ProviderSettings(
            issuer=settings.oidc_issuer,
            client_id=settings.oidc_client_id,
            client_secret=settings.oidc_client_secret.get_secret_value(),
            name_claim=settings.oidc_name_claim,
            tenant_id=settings.oidc_tenant,
            display_name=settings.oidc_provider_name,
            session_ttl=timedelta(hours=settings.console_session_hours),
        )
    )
