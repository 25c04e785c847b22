"""Key management: create (the key is shown once), list, revoke."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.domain.errors import InvalidInputError, NotFoundError
from app.domain.keys import CAPABILITIES, display_prefix, generate_key, hash_key
from app.repository.keys import ApiKey, KeyRepository


@dataclass(frozen=True, slots=True)
class NewKey:
    key: str  # the only time the key itself exists outside its holder
    record: ApiKey


class KeyService:
    def __init__(self, conn: Any) -> None:
        self._repo = KeyRepository(conn)

    async def create(self, tenant_id: str, name: str, role: str) -> NewKey:
        if role not in CAPABILITIES["read"]:
            raise InvalidInputError(f"unknown role '{role}'", field="role")
        if not tenant_id.strip() or not name.strip():
            raise InvalidInputError("tenant and name must not be empty", field="name")
        key = generate_key()
        record = await self._repo.create(
            tenant_id.strip(), name.strip(), role, hash_key(key), display_prefix(key)
        )
        return NewKey(key, record)

    async def list(self, tenant_id: str | None) -> list[ApiKey]:
        return await self._repo.list(tenant_id)

    async def revoke(self, tenant_id: str | None, key_id: UUID) -> ApiKey:
        record = await self._repo.revoke(tenant_id, key_id)
        if record is None:
            raise NotFoundError(f"key {key_id} not found")
        return record
