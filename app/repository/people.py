"""People, and what removing one takes with them. Like api_keys, `people` is read beside a
key before the tenant is known; each statement names its tenant."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

from app.db.unit_of_work import set_local
from app.domain.people import Person, PersonSummary
from app.repository.sql import named

_COLUMNS = "tenant_id, id, name, created_at, removed_at"


def _person(row: Any) -> Person:
    return Person(**{name: row[name] for name in _COLUMNS.split(", ")})


@asynccontextmanager
async def over_every_person(conn: Any) -> AsyncIterator[None]:
    """For the statements inside: every person's personal rows, which row security hides
    from a transaction of one person (migration 0045). Only for counting them and for
    deleting a removed person's; then back to the transaction's own."""
    before = await conn.fetchval("SELECT current_setting('app.every_person', true)")
    await set_local(conn, {"app.every_person": "on"})
    try:
        yield
    finally:
        await set_local(conn, {"app.every_person": before or "off"})


class PeopleRepository:
    """On a unit of work's connection (an admin over the API) or the owner's (the CLI)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def named(self, tenant_id: str, name: str) -> Person | None:
        """The present person of that name."""
        row = await self._conn.fetchrow(
            *named(
                f"SELECT {_COLUMNS} FROM people WHERE tenant_id = :tenant_id AND name = :name"
                " AND removed_at IS NULL",
                {"tenant_id": tenant_id, "name": name},
            )
        )
        return _person(row) if row else None

    async def get(self, tenant_id: str, person_id: UUID) -> Person | None:
        row = await self._conn.fetchrow(
            *named(
                f"SELECT {_COLUMNS} FROM people WHERE tenant_id = :tenant_id AND id = :person_id",
                {"tenant_id": tenant_id, "person_id": person_id},
            )
        )
        return _person(row) if row else None

    async def names(self, tenant_id: str) -> dict[UUID, str]:
        rows = await self._conn.fetch(
            *named(
                "SELECT id, name FROM people WHERE tenant_id = :tenant_id",
                {"tenant_id": tenant_id},
            )
        )
        return {r["id"]: r["name"] for r in rows}

    async def add(self, tenant_id: str, name: str) -> tuple[Person, bool]:
        """The present person of that name, made when there is none; and whether it was
        made. Two adds at once make one (the unique name among the present)."""
        row = await self._conn.fetchrow(
            *named(
                f"""
                WITH made AS (
                    INSERT INTO people (tenant_id, name) VALUES (:tenant_id, :name)
                    ON CONFLICT (tenant_id, name) WHERE removed_at IS NULL DO NOTHING
                    RETURNING {_COLUMNS}
                )
                SELECT *, true AS made FROM made
                UNION ALL
                SELECT {_COLUMNS}, false FROM people
                WHERE tenant_id = :tenant_id AND name = :name AND removed_at IS NULL
                  AND NOT EXISTS (SELECT FROM made)
                """,
                {"tenant_id": tenant_id, "name": name},
            )
        )
        if row is None:  # made by another transaction that has not committed: once more
            return await self.add(tenant_id, name)
        return _person(row), bool(row["made"])

    async def summaries(self, tenant_id: str) -> list[PersonSummary]:
        """The tenant's present people, by name, with their active keys and how many
        personal memories they hold (counted, never read)."""
        async with over_every_person(self._conn):
            rows = await self._conn.fetch(
                *named(
                    f"""
                    SELECT {", ".join(f"p.{c}" for c in _COLUMNS.split(", "))},
                        (SELECT count(*) FROM api_keys k WHERE k.tenant_id = p.tenant_id
                           AND k.person_id = p.id AND k.revoked_at IS NULL) AS active_keys,
                        (SELECT count(*) FROM memories m WHERE m.tenant_id = :tenant_id
                           AND m.personal_to = p.id) AS personal_memories
                    FROM people p
                    WHERE p.tenant_id = :tenant_id AND p.removed_at IS NULL
                    ORDER BY p.name
                    """,
                    {"tenant_id": tenant_id},
                )
            )
        return [PersonSummary(_person(r), r["active_keys"], r["personal_memories"]) for r in rows]

    async def remove(self, tenant_id: str, person_id: UUID) -> tuple[int, int] | None:
        """Mark the person removed, revoke their keys and delete their personal memories
        (their team memories stay, still naming them): the keys revoked and the memories
        deleted; None when no present person has that id."""
        values = {"tenant_id": tenant_id, "person_id": person_id}
        removed = await self._conn.fetchval(
            *named(
                "UPDATE people SET removed_at = now() WHERE tenant_id = :tenant_id"
                " AND id = :person_id AND removed_at IS NULL RETURNING true",
                values,
            )
        )
        if not removed:
            return None
        revoked = await self._conn.fetchval(
            *named(
                "WITH revoked AS (UPDATE api_keys SET revoked_at = now()"
                " WHERE tenant_id = :tenant_id AND person_id = :person_id"
                " AND revoked_at IS NULL RETURNING 1) SELECT count(*) FROM revoked",
                values,
            )
        )
        return int(revoked), await self.delete_personal(tenant_id, person_id)

    async def delete_personal(self, tenant_id: str, person_id: UUID) -> int:
        """Delete the person's personal memories and drafts, unread: how many memories."""
        values = {"tenant_id": tenant_id, "person_id": person_id}
        async with over_every_person(self._conn):
            deleted = await self._conn.fetchval(
                *named(
                    "WITH gone AS (DELETE FROM memories m WHERE m.tenant_id = :tenant_id"
                    " AND m.personal_to = :person_id RETURNING 1) SELECT count(*) FROM gone",
                    values,
                )
            )
            await self._conn.execute(
                *named(
                    "DELETE FROM drafts d WHERE d.tenant_id = :tenant_id"
                    " AND d.personal_to = :person_id",
                    values,
                )
            )
        return int(deleted)
