"""Connected clients (OAuth 2.1, migration 0046): registrations, authorization requests,
grants, codes and tokens. Read by a hash or a client id before the tenant is known, like
api_keys (reference tables on Citus); a grant names its tenant, and every statement that
lists or revokes grants names it too."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any
from uuid import UUID

from app.domain.oauth import AuthorizationRequest, Grant, IssuedCode, IssuedToken
from app.repository.sql import named

_GRANT = (
    "tenant_id, id, person_id, granted_by_key, client_id, client_name, redirect_uri, role,"
    " resource, scopes, created_at, revoked_at"
)
_GRANT_OF_G = ", ".join(f"g.{name}" for name in _GRANT.split(", "))
_REQUEST = (
    "client_id, client_name, redirect_uri, redirect_uri_explicit, code_challenge, state,"
    " scopes, resource, expires_at"
)
# Whether the grant still has someone behind it: its person, while present; for a grant of
# no one, the key that made it, while not revoked. (Removing a person revokes their grants
# too: revoke_person's grants, which the person's removal calls.)
_STANDING = """
CASE WHEN g.person_id IS NULL
     THEN (SELECT k.revoked_at IS NULL FROM api_keys k
           WHERE k.tenant_id = g.tenant_id AND k.id = g.granted_by_key)
     ELSE (SELECT p.removed_at IS NULL FROM people p
           WHERE p.tenant_id = g.tenant_id AND p.id = g.person_id)
END"""


def _grant(row: Any, prefix: str = "") -> Grant:
    return Grant(
        **{name: row[prefix + name] for name in _GRANT.split(", ")},
        last_token_at=row.get("last_token_at"),
        person_name=row.get("person_name"),
    )


def _request(row: Any) -> AuthorizationRequest:
    return AuthorizationRequest(**{name: row[name] for name in _REQUEST.split(", ")})


class OAuthRepository:
    """On a plain connection (a token's lookup, before any unit of work) or a unit of
    work's (a consent, a refresh, a revocation, with its audit entry)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    # Clients registered by RFC 7591 (a metadata document's client is fetched, not kept).

    async def add_client(
        self, client_id: str, secret_hash: str | None, metadata: dict[str, Any]
    ) -> None:
        await self._conn.execute(
            *named(
                "INSERT INTO oauth_clients (id, secret_hash, metadata)"
                " VALUES (:client_id, :secret_hash, :metadata)",
                {"client_id": client_id, "secret_hash": secret_hash, "metadata": metadata},
            )
        )

    async def forget_unapproved_beyond(self, kept: int) -> int:
        """The registrations no grant names, all but the newest `kept`, deleted: how many."""
        status = await self._conn.execute(
            *named(
                "DELETE FROM oauth_clients WHERE id IN (SELECT c.id FROM oauth_clients c"
                " WHERE NOT EXISTS (SELECT FROM oauth_grants g WHERE g.client_id = c.id)"
                " ORDER BY c.created_at DESC, c.id DESC OFFSET :kept)",
                {"kept": kept},
            )
        )
        return int(status.split()[-1])

    async def client(self, client_id: str) -> tuple[str | None, dict[str, Any]] | None:
        """Its secret's hash (None: a public client) and its metadata."""
        row = await self._conn.fetchrow(
            *named(
                "SELECT secret_hash, metadata FROM oauth_clients WHERE id = :client_id",
                {"client_id": client_id},
            )
        )
        return (row["secret_hash"], row["metadata"]) if row else None

    # Authorization requests, waiting for a person.

    async def open_request(self, request_hash: str, request: AuthorizationRequest) -> None:
        values = {"request_hash": request_hash, **asdict(request)}
        await self._conn.execute(
            *named(
                f"INSERT INTO oauth_requests (request_hash, {_REQUEST})"
                " VALUES (:request_hash, :client_id, :client_name, :redirect_uri,"
                " :redirect_uri_explicit, :code_challenge, :state, :scopes, :resource,"
                " :expires_at)",
                values,
            )
        )

    async def request(self, request_hash: str) -> AuthorizationRequest | None:
        row = await self._conn.fetchrow(
            *named(
                f"SELECT {_REQUEST} FROM oauth_requests"
                " WHERE request_hash = :request_hash AND expires_at > now()",
                {"request_hash": request_hash},
            )
        )
        return _request(row) if row else None

    async def close_request(self, request_hash: str) -> AuthorizationRequest | None:
        """The request, taken away: a person decides it once (two answers at once, one wins)."""
        row = await self._conn.fetchrow(
            *named(
                "DELETE FROM oauth_requests"
                " WHERE request_hash = :request_hash AND expires_at > now()"
                f" RETURNING {_REQUEST}",
                {"request_hash": request_hash},
            )
        )
        return _request(row) if row else None

    # Grants.

    async def add_grant(
        self,
        tenant_id: str,
        person_id: UUID | None,
        granted_by_key: UUID,
        request: AuthorizationRequest,
        role: str,
    ) -> Grant:
        row = await self._conn.fetchrow(
            *named(
                "INSERT INTO oauth_grants (tenant_id, person_id, granted_by_key, client_id,"
                " client_name, redirect_uri, role, resource, scopes)"
                " VALUES (:tenant_id, :person_id, :granted_by_key, :client_id, :client_name,"
                f" :redirect_uri, :role, :resource, :scopes) RETURNING {_GRANT}",
                {
                    "tenant_id": tenant_id,
                    "person_id": person_id,
                    "granted_by_key": granted_by_key,
                    "client_id": request.client_id,
                    "client_name": request.client_name,
                    "redirect_uri": request.redirect_uri,
                    "role": role,
                    "resource": request.resource,
                    "scopes": request.scopes,
                },
            )
        )
        return _grant(row)

    async def grants(self, tenant_id: str, person_id: UUID | None = None) -> list[Grant]:
        """A tenant's grants (or one person's), newest first, each with when it last had a
        token."""
        rows = await self._conn.fetch(
            *named(
                f"SELECT {_GRANT_OF_G},"
                " (SELECT max(t.created_at) FROM oauth_tokens t WHERE t.grant_id = g.id)"
                " AS last_token_at,"
                " (SELECT p.name FROM people p WHERE p.tenant_id = g.tenant_id"
                " AND p.id = g.person_id) AS person_name"
                " FROM oauth_grants g WHERE g.tenant_id = :tenant_id"
                " AND (:person_id::uuid IS NULL OR g.person_id = :person_id)"
                " ORDER BY g.revoked_at IS NOT NULL, g.created_at DESC LIMIT 500",
                {"tenant_id": tenant_id, "person_id": person_id},
            )
        )
        return [_grant(r) for r in rows]

    async def grant(self, tenant_id: str, grant_id: UUID) -> Grant | None:
        row = await self._conn.fetchrow(
            *named(
                f"SELECT {_GRANT} FROM oauth_grants WHERE tenant_id = :tenant_id AND id = :id",
                {"tenant_id": tenant_id, "id": grant_id},
            )
        )
        return _grant(row) if row else None

    async def revoke(self, tenant_id: str, grant_id: UUID) -> Grant | None:
        """The grant, revoked now if it was not: every code and token under it with it. None
        when it was already revoked (or is not the tenant's)."""
        row = await self._conn.fetchrow(
            *named(
                "UPDATE oauth_grants SET revoked_at = now()"
                " WHERE tenant_id = :tenant_id AND id = :id AND revoked_at IS NULL"
                f" RETURNING {_GRANT}",
                {"tenant_id": tenant_id, "id": grant_id},
            )
        )
        return _grant(row) if row else None

    async def revoke_person(self, tenant_id: str, person_id: UUID) -> list[Grant]:
        """Every grant of (tenant_id, person_id) still standing, revoked now, in the caller's
        transaction: what removing a person calls (their clients lose access at once)."""
        rows = await self._conn.fetch(
            *named(
                "UPDATE oauth_grants SET revoked_at = now()"
                " WHERE tenant_id = :tenant_id AND person_id = :person_id"
                f" AND revoked_at IS NULL RETURNING {_GRANT}",
                {"tenant_id": tenant_id, "person_id": person_id},
            )
        )
        return [_grant(r) for r in rows]

    # Codes.

    async def add_code(
        self,
        code_hash: str,
        grant_id: UUID,
        request: AuthorizationRequest,
        expires_at: datetime,
    ) -> None:
        await self._conn.execute(
            *named(
                "INSERT INTO oauth_codes (code_hash, grant_id, client_id, redirect_uri,"
                " redirect_uri_explicit, code_challenge, expires_at)"
                " VALUES (:code_hash, :grant_id, :client_id, :redirect_uri,"
                " :redirect_uri_explicit, :code_challenge, :expires_at)",
                {
                    "code_hash": code_hash,
                    "grant_id": grant_id,
                    "client_id": request.client_id,
                    "redirect_uri": request.redirect_uri,
                    "redirect_uri_explicit": request.redirect_uri_explicit,
                    "code_challenge": request.code_challenge,
                    "expires_at": expires_at,
                },
            )
        )

    async def code(self, code_hash: str) -> IssuedCode | None:
        row = await self._conn.fetchrow(
            *named(
                f"SELECT {_GRANT_OF_G}, c.client_id AS code_client_id, c.redirect_uri AS"
                " code_redirect_uri, c.redirect_uri_explicit, c.code_challenge,"
                " c.expires_at AS code_expires_at, c.used_at IS NOT NULL AS used"
                " FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id"
                " WHERE c.code_hash = :code_hash",
                {"code_hash": code_hash},
            )
        )
        if row is None:
            return None
        return IssuedCode(
            grant=_grant(row),
            client_id=row["code_client_id"],
            redirect_uri=row["code_redirect_uri"],
            redirect_uri_explicit=row["redirect_uri_explicit"],
            code_challenge=row["code_challenge"],
            expires_at=row["code_expires_at"],
            used=row["used"],
        )

    async def use_code(self, code_hash: str) -> bool:
        """Whether this call used the code (unused and unexpired until now): one exchange."""
        used = await self._conn.fetchval(
            *named(
                "UPDATE oauth_codes SET used_at = now() WHERE code_hash = :code_hash"
                " AND used_at IS NULL AND expires_at > now() RETURNING true",
                {"code_hash": code_hash},
            )
        )
        return bool(used)

    # Tokens.

    async def add_tokens(
        self,
        grant_id: UUID,
        access_hash: str,
        access_expires_at: datetime,
        refresh_hash: str,
        refresh_expires_at: datetime,
    ) -> None:
        await self._conn.execute(
            *named(
                "INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at)"
                " VALUES (:access_hash, :grant_id, 'access', :access_expires_at),"
                " (:refresh_hash, :grant_id, 'refresh', :refresh_expires_at)",
                {
                    "grant_id": grant_id,
                    "access_hash": access_hash,
                    "access_expires_at": access_expires_at,
                    "refresh_hash": refresh_hash,
                    "refresh_expires_at": refresh_expires_at,
                },
            )
        )

    async def token(self, token_hash: str, kind: str) -> IssuedToken | None:
        """A token of that kind, with its grant and whether anyone still stands behind it
        (the caller judges expiry, revocation and resource: each is its own refusal)."""
        row = await self._conn.fetchrow(
            *named(
                f"SELECT {_GRANT_OF_G}, t.kind, t.expires_at AS token_expires_at,"
                f" t.rotated_at IS NOT NULL AS rotated, {_STANDING} AS standing"
                " FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id"
                " WHERE t.token_hash = :token_hash AND t.kind = :kind",
                {"token_hash": token_hash, "kind": kind},
            )
        )
        if row is None:
            return None
        return IssuedToken(
            grant=_grant(row),
            kind=row["kind"],
            expires_at=row["token_expires_at"],
            rotated=row["rotated"],
            standing=bool(row["standing"]),
        )

    async def rotate(self, refresh_hash: str) -> bool:
        """Whether this call exchanged the refresh token (not exchanged, unexpired until now)."""
        rotated = await self._conn.fetchval(
            *named(
                "UPDATE oauth_tokens SET rotated_at = now() WHERE token_hash = :refresh_hash"
                " AND kind = 'refresh' AND rotated_at IS NULL AND expires_at > now()"
                " RETURNING true",
                {"refresh_hash": refresh_hash},
            )
        )
        return bool(rotated)

    # The schedule.

    async def forget_expired(self, unused_client_days: int) -> int:
        """What no one can use any more: expired requests, codes and tokens, every code and
        token of a revoked grant, and a registered client that never got a grant within
        `unused_client_days`. Grants stay (revoked ones as history). How many rows went.
        (One statement each: Citus takes no modifying CTE over reference tables.)"""
        dead = (
            "EXISTS (SELECT FROM oauth_grants g"
            " WHERE g.id = {}.grant_id AND g.revoked_at IS NOT NULL)"
        )
        statements: tuple[tuple[str, dict[str, Any]], ...] = (
            ("DELETE FROM oauth_requests WHERE expires_at < now()", {}),
            (f"DELETE FROM oauth_codes c WHERE c.expires_at < now() OR {dead.format('c')}", {}),
            (f"DELETE FROM oauth_tokens t WHERE t.expires_at < now() OR {dead.format('t')}", {}),
            (
                "DELETE FROM oauth_clients c"
                " WHERE c.created_at < now() - make_interval(days => :days)"
                " AND NOT EXISTS (SELECT FROM oauth_grants g WHERE g.client_id = c.id)",
                {"days": unused_client_days},
            ),
        )
        gone = 0
        for sql, values in statements:
            status = await self._conn.execute(*named(sql, values))
            gone += int(status.split()[-1])
        return gone
