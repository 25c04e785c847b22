"""A team's people: added by name (or on a key's first use), listed with what they hold,
removed with their keys and their personal memories. Over the API for one tenant's admin,
each change in the audit trail; the CLI on the server works as the database's owner, each
change in the tenant's trail as the operator's (as KeyService)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

from app.db.pool import on_citus
from app.db.unit_of_work import set_local
from app.domain.errors import NotFoundError
from app.domain.people import Person, PersonSummary, person_name
from app.domain.principal import Principal
from app.repository.audit import record_operator_entry
from app.repository.oauth import OAuthRepository
from app.repository.people import PeopleRepository
from app.services.audit import AuditTrail


class PeopleService:
    def __init__(
        self,
        connection: Callable[[], Awaitable[Any]],
        audit: AuditTrail | None = None,
        actor: Principal | None = None,
    ) -> None:
        """`connection`: the request's (its unit of work's), with its `audit` trail and
        `actor`; or the CLI's own (the owner's: neither)."""
        self._connection = connection
        self._audit = audit
        self._actor = actor

    def _require(self, capability: str) -> None:
        if self._actor is not None:
            self._actor.require(capability)

    @classmethod
    def on_connection(cls, conn: Any) -> PeopleService:
        """Over a connection of the database's owner (the CLI on the server)."""

        async def given() -> Any:
            return conn

        return cls(given)

    async def _people(self) -> PeopleRepository:
        return PeopleRepository(await self._connection())

    async def _record(self, action: str, person: Person, **more: Any) -> None:
        detail = {"person": str(person.id), "name": person.name, **more}
        await self._entry(person.tenant_id, action, detail)

    async def _entry(self, tenant_id: str, action: str, detail: dict[str, Any]) -> None:
        if self._audit is not None:
            await self._audit.record(action, detail=detail, memory_ids=[])
        else:
            await record_operator_entry(await self._connection(), tenant_id, action, detail)

    async def add(self, tenant_id: str, name: str, field: str = "name") -> tuple[Person, bool]:
        """The present person of that name, made (and recorded) when there is none.
        `field`: where the door took the name, for a refusal to name it."""
        self._require("admin")
        person, made = await (await self._people()).add(tenant_id, person_name(name, field))
        if made:
            await self._record("person_add", person)
        return person, made

    async def named(self, tenant_id: str, name: str) -> Person:
        self._require("admin")
        person = await (await self._people()).named(tenant_id, person_name(name))
        if person is None:
            raise NotFoundError(f"no person named '{name}' in tenant '{tenant_id}'")
        return person

    async def get(self, tenant_id: str, person_id: UUID) -> Person | None:
        self._require("admin")
        return await (await self._people()).get(tenant_id, person_id)

    async def names(self, tenant_id: str) -> dict[UUID, str]:
        """Every person the tenant ever had, by id: who wrote what, for any reader (a team
        knows its members' names; removed ones keep theirs)."""
        self._require("read")
        return await (await self._people()).names(tenant_id)

    async def list(self, tenant_id: str) -> list[PersonSummary]:
        self._require("admin")
        async with self._as_tenant(tenant_id) as conn:
            return await PeopleRepository(conn).summaries(tenant_id)

    async def remove(self, person: Person) -> tuple[int, int]:
        """Revoke the person's keys and connected clients, and delete their personal
        memories and drafts; their team memories stay, still naming them. The keys revoked
        and memories deleted."""
        self._require("admin")
        async with self._as_tenant(person.tenant_id) as conn:
            done = await PeopleRepository(conn).remove(person.tenant_id, person.id)
            if done is None:
                raise NotFoundError(f"person {person.id} not found (or already removed)")
            grants = await OAuthRepository(conn).revoke_person(person.tenant_id, person.id)
        revoked, deleted = done
        await self._record("person_remove", person, keys_revoked=revoked, memories_deleted=deleted)
        for grant in grants:
            await self._entry(person.tenant_id, "oauth_revoke", {**grant.detail, "by": "admin"})
        return done

    async def delete_personal(self, person: Person) -> int:
        """An admin's delete of a person's personal memories, which no admin reads: how
        many. The person stays, with their keys."""
        self._require("admin")
        async with self._as_tenant(person.tenant_id) as conn:
            deleted = await PeopleRepository(conn).delete_personal(person.tenant_id, person.id)
        await self._record("personal_delete", person, memories_deleted=deleted)
        return deleted

    @asynccontextmanager
    async def _as_tenant(self, tenant_id: str) -> AsyncIterator[Any]:
        """The connection to work on: the request's, in its tenant's transaction; or the
        owner's, in a transaction of its own named the tenant's for row security (forced
        on the owner too unless a superuser), and on Citus on the tenant's worker."""
        conn = await self._connection()
        if self._audit is not None:
            yield conn
            return
        async with conn.transaction():
            if await on_citus(conn):
                await conn.execute("SET LOCAL citus.propagate_set_commands = 'local'")
            await set_local(conn, {"app.tenant_id": tenant_id})
            yield conn
