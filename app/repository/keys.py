"""API keys. Looked up by hash before the tenant is known; managed within one tenant."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.domain.keys import ApiKey
from app.repository.sql import named

_COLUMNS = "tenant_id, id, name, role, prefix, created_at, revoked_at, person_id"


def _key(row: Any) -> ApiKey:
    return ApiKey(**{name: row[name] for name in _COLUMNS.split(", ")})


class KeyRepository:
    """Works on a plain connection: authentication happens before any unit of work."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def authenticate(self, key_hash: str) -> ApiKey | None:
        row = await self._conn.fetchrow(
            *named(
                f"SELECT {_COLUMNS} FROM api_keys"
                " WHERE key_hash = :key_hash AND revoked_at IS NULL",
                {"key_hash": key_hash},
            )
        )
        return _key(row) if row else None

    async def tenants(self) -> list[str]:
        rows = await self._conn.fetch("SELECT DISTINCT tenant_id FROM api_keys ORDER BY 1")
        return [r["tenant_id"] for r in rows]

    async def hold_first_key_lock(self) -> None:
        """Until the transaction ends: one server at a time decides the first key."""
        await self._conn.execute("SELECT pg_advisory_xact_lock(hashtext('first-admin-key'))")

    async def any_ever(self) -> bool:
        """Whether any key was ever created, revoked ones included (keys are never deleted)."""
        ever: bool = await self._conn.fetchval("SELECT EXISTS (SELECT 1 FROM api_keys)")
        return ever

    async def other_active_admins(self, tenant_id: str, key_id: UUID) -> int:
        """The tenant's active admin keys other than this one."""
        count: int = await self._conn.fetchval(
            *named(
                "SELECT count(*) FROM api_keys WHERE tenant_id = :tenant_id AND role = 'admin'"
                " AND revoked_at IS NULL AND id <> :key_id",
                {"tenant_id": tenant_id, "key_id": key_id},
            )
        )
        return count

    async def get(self, tenant_id: str | None, key_id: UUID) -> ApiKey | None:
        row = await self._conn.fetchrow(
            *named(
                f"SELECT {_COLUMNS} FROM api_keys"
                " WHERE id = :key_id AND (:tenant_id::text IS NULL OR tenant_id = :tenant_id)",
                {"tenant_id": tenant_id, "key_id": key_id},
            )
        )
        return _key(row) if row else None

    async def create(
        self,
        tenant_id: str,
        name: str,
        role: str,
        key_hash: str,
        prefix: str,
        person_id: UUID | None = None,
    ) -> ApiKey:
        values = {
            "tenant_id": tenant_id,
            "name": name,
            "role": role,
            "key_hash": key_hash,
            "prefix": prefix,
            "person_id": person_id,
        }
        row = await self._conn.fetchrow(
            *named(
                "INSERT INTO api_keys (tenant_id, name, role, key_hash, prefix, person_id)"
                " VALUES (:tenant_id, :name, :role, :key_hash, :prefix, :person_id)"
                f" RETURNING {_COLUMNS}",
                values,
            )
        )
        return _key(row)

    async def list(self, tenant_id: str | None) -> list[ApiKey]:
        rows = await self._conn.fetch(
            *named(
                f"SELECT {_COLUMNS} FROM api_keys"
                " WHERE :tenant_id::text IS NULL OR tenant_id = :tenant_id"
                " ORDER BY tenant_id, created_at",
                {"tenant_id": tenant_id},
            )
        )
        return [_key(r) for r in rows]

    async def revoke(self, tenant_id: str | None, key_id: UUID) -> ApiKey | None:
        row = await self._conn.fetchrow(
            # least(): the first revocation's time stays (and NULL is ignored); Citus takes
            # no now() inside coalesce in an UPDATE.
            *named(
                "UPDATE api_keys SET revoked_at = least(revoked_at, now())"
                " WHERE id = :key_id AND (:tenant_id::text IS NULL OR tenant_id = :tenant_id)"
                f" RETURNING {_COLUMNS}",
                {"tenant_id": tenant_id, "key_id": key_id},
            )
        )
        return _key(row) if row else None
