"""Key management: create (the key is shown once), list, revoke."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from uuid import UUID

import asyncpg

from app.domain.errors import ConflictError, NotFoundError
from app.domain.inputs.keys import key_request
from app.domain.keys import ROLES, ApiKey, display_prefix, generate_key, hash_key
from app.domain.secrets.screen import screen
from app.repository.audit import record_operator_entry
from app.repository.keys import KeyRepository
from app.services.audit import AuditTrail
from app.services.people import PeopleService


@dataclass(frozen=True, slots=True)
class NewKey:
    key: str  # the only time the key itself exists outside its holder
    record: ApiKey


class KeyService:
    """Over the API, for one tenant's admin, each change is in the audit trail; the CLI on
    the server (the database owner's access) works across tenants, and each change is in
    the key's tenant's trail as the operator's."""

    def __init__(
        self,
        connection: Callable[[], Awaitable[asyncpg.Connection]],
        audit: AuditTrail | None = None,
    ) -> None:
        """`connection`: the request's (its unit of work's), or the CLI's own (on_connection)."""
        self._connection = connection
        self._audit = audit

    @classmethod
    def on_connection(cls, conn: asyncpg.Connection) -> KeyService:
        """Over a connection of the database's owner (the CLI on the server): every tenant,
        each change recorded as the operator's."""

        async def given() -> asyncpg.Connection:
            return conn

        return cls(given)

    async def _keys(self) -> KeyRepository:
        return KeyRepository(await self._connection())

    @property
    def people(self) -> PeopleService:
        return PeopleService(self._connection, self._audit)  # the key's admin check is ours

    async def _record(self, action: str, key: ApiKey) -> None:
        detail = {"key": str(key.id), "name": key.name, "role": key.role}
        if key.person_id is not None:
            detail["person"] = str(key.person_id)
        if self._audit is not None:
            await self._audit.record(action, detail=detail, memory_ids=[])
        else:
            await record_operator_entry(await self._connection(), key.tenant_id, action, detail)

    async def create(
        self, tenant_id: str, name: str, role: str, person: str | None = None
    ) -> NewKey:
        """`person`: whom the key acts for, by name; made on first use (docs/team.md)."""
        tenant_id, name, role = key_request(tenant_id, name, role, ROLES)
        # Listed to every admin and written to the log: never a credential.
        name = screen(name, "name", "refuse")
        person_id = None
        if person is not None:
            person_id = (await self.people.add(tenant_id, person, "person"))[0].id
        key = generate_key()
        record = await (await self._keys()).create(
            tenant_id, name, role, hash_key(key), display_prefix(key), person_id
        )
        await self._record("key_create", record)
        return NewKey(key, record)

    async def first_admin(self) -> NewKey | None:
        """The `default` tenant's first admin key, unless a key was ever created; in the
        caller's transaction, which two servers starting together take one at a time."""
        keys = await self._keys()
        await keys.hold_first_key_lock()
        if await keys.any_ever():
            return None
        return await self.create("default", "first-admin", "admin")

    async def role_of_new(self, tenant_id: str, role: str | None) -> str:
        """The role of a key created from the server's shell: the one asked for, else admin
        for a tenant with no active key (someone must manage its keys), else agent."""
        if role is not None:
            return role
        active = [k for k in await self.list(tenant_id) if not k.revoked_at]
        return "agent" if active else "admin"

    async def list(self, tenant_id: str | None) -> list[ApiKey]:
        return await (await self._keys()).list(tenant_id)

    async def revoke(self, tenant_id: str | None, key_id: UUID, force: bool = False) -> Revoked:
        """Revoking a tenant's last active admin key leaves nobody who can manage its keys
        over the API: that takes `force`, and the answer says what it leaves."""
        current = await (await self._keys()).get(tenant_id, key_id)
        if current is None:
            raise NotFoundError(f"key {key_id} not found")
        last_admin = (
            current.role == "admin"
            and current.revoked_at is None
            and await (await self._keys()).other_active_admins(current.tenant_id, key_id) == 0
        )
        note = None
        if last_admin:
            note = (
                f"this was tenant '{current.tenant_id}''s last active admin key: its keys can"
                " now be managed only with `agent-memory keys` on the server"
            )
            if not force:
                raise ConflictError(
                    f"key {key_id} is tenant '{current.tenant_id}''s last active admin key;"
                    " revoking it leaves no admin key for the tenant (only `agent-memory keys`"
                    " on the server could make one). Revoke with force=true to do it anyway",
                    field="force",
                )
        record = await (await self._keys()).revoke(tenant_id, key_id)
        if record is None:
            raise NotFoundError(f"key {key_id} not found")
        if current.revoked_at is None:
            await self._record("key_revoke", record)
        return Revoked(record, note)


@dataclass(frozen=True, slots=True)
class Revoked:
    record: ApiKey
    note: str | None  # what the revocation leaves, when it matters
