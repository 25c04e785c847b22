"""/admin/keys: an admin manages the keys of its own tenant."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import CanAdmin, PrincipalDep, RuntimeDep
from app.repository.keys import ApiKey
from app.services.keys import KeyService

router = APIRouter(prefix="/admin/keys", tags=["admin"], dependencies=[CanAdmin])


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    role: Literal["agent", "reader", "admin"]


class KeyOut(BaseModel):
    id: UUID
    tenant_id: str
    name: str
    role: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None

    @classmethod
    def of(cls, key: ApiKey) -> KeyOut:
        return cls(
            id=key.id,
            tenant_id=key.tenant_id,
            name=key.name,
            role=key.role,
            prefix=key.prefix,
            created_at=key.created_at,
            revoked_at=key.revoked_at,
        )


class NewKeyOut(KeyOut):
    key: str = Field(description="Shown once; only its hash is stored.")


@router.post("", response_model=NewKeyOut, status_code=201)
async def create_key(body: KeyIn, principal: PrincipalDep, runtime: RuntimeDep) -> NewKeyOut:
    async with runtime.database.pool.acquire() as conn:
        created = await KeyService(conn).create(principal.tenant_id, body.name, body.role)
    return NewKeyOut(**KeyOut.of(created.record).model_dump(), key=created.key)


@router.get("", response_model=list[KeyOut])
async def list_keys(principal: PrincipalDep, runtime: RuntimeDep) -> list[KeyOut]:
    async with runtime.database.pool.acquire() as conn:
        return [KeyOut.of(k) for k in await KeyService(conn).list(principal.tenant_id)]


@router.delete("/{key_id}", response_model=KeyOut)
async def revoke_key(key_id: UUID, principal: PrincipalDep, runtime: RuntimeDep) -> KeyOut:
    async with runtime.database.pool.acquire() as conn:
        return KeyOut.of(await KeyService(conn).revoke(principal.tenant_id, key_id))
