"""Console sessions of people signed in through the identity provider (migration 0050). Read
by the id's hash before the tenant is known, like api_keys; on a plain connection."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from app.repository.sql import named


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session, and what its person holds now: their active keys' ids and roles (none
    when the person was removed or revoked them all)."""

    tenant_id: str
    person_id: UUID
    role: str
    expires_at: datetime
    keys: list[tuple[UUID, str]]


class ConsoleSessionRepository:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def active_keys(self, tenant_id: str, person_id: UUID) -> list[tuple[UUID, str]]:
        """The ids and roles of a present person's active keys (none for a removed person),
        oldest first."""
        rows = await self._conn.fetch(
            *named(
                "SELECT k.id, k.role FROM api_keys k JOIN people p"
                " ON p.tenant_id = k.tenant_id AND p.id = k.person_id AND p.removed_at IS NULL"
                " WHERE k.tenant_id = :tenant_id AND k.person_id = :person_id"
                " AND k.revoked_at IS NULL ORDER BY k.created_at",
                {"tenant_id": tenant_id, "person_id": person_id},
            )
        )
        return [(r["id"], r["role"]) for r in rows]

    async def add(
        self, id_hash: str, tenant_id: str, person_id: UUID, role: str, expires_at: datetime
    ) -> None:
        await self._conn.execute(
            *named(
                "INSERT INTO console_sessions (id_hash, tenant_id, person_id, role, expires_at)"
                " VALUES (:id_hash, :tenant_id, :person_id, :role, :expires_at)",
                {
                    "id_hash": id_hash,
                    "tenant_id": tenant_id,
                    "person_id": person_id,
                    "role": role,
                    "expires_at": expires_at,
                },
            )
        )

    async def get(self, id_hash: str) -> StoredSession | None:
        """The unexpired session, with its present person's active keys (a bounded few)."""
        row = await self._conn.fetchrow(
            *named(
                """
                SELECT s.tenant_id, s.person_id, s.role, s.expires_at,
                    coalesce(k.ids, '{}') AS key_ids, coalesce(k.roles, '{}') AS key_roles
                FROM console_sessions s
                LEFT JOIN LATERAL (
                    SELECT array_agg(k.id ORDER BY k.created_at) AS ids,
                        array_agg(k.role ORDER BY k.created_at) AS roles
                    FROM api_keys k
                    JOIN people p ON p.tenant_id = k.tenant_id AND p.id = k.person_id
                    WHERE k.tenant_id = s.tenant_id AND k.person_id = s.person_id
                      AND k.revoked_at IS NULL AND p.removed_at IS NULL
                ) k ON true
                WHERE s.id_hash = :id_hash AND s.expires_at > now()
                """,
                {"id_hash": id_hash},
            )
        )
        if row is None:
            return None
        return StoredSession(
            row["tenant_id"],
            row["person_id"],
            row["role"],
            row["expires_at"],
            list(zip(row["key_ids"], row["key_roles"], strict=True)),
        )

    async def delete(self, id_hash: str) -> None:
        await self._conn.execute(
            *named("DELETE FROM console_sessions WHERE id_hash = :id_hash", {"id_hash": id_hash})
        )

    async def delete_expired(self) -> None:
        await self._conn.execute("DELETE FROM console_sessions WHERE expires_at <= now()")
