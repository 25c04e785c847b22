"""/admin/keys: an admin manages the keys of its own tenant."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter

from app.api.deps import PrincipalDep, RuntimeDep
from app.api.schemas import KeyIn
from app.services.keys import tenant_keys
from app.views import KeyOut, NewKeyOut

router = APIRouter(prefix="/admin/keys", tags=["admin"])


@router.post("", response_model=NewKeyOut, status_code=201)
async def create_key(body: KeyIn, principal: PrincipalDep, runtime: RuntimeDep) -> NewKeyOut:
    async with tenant_keys(runtime, principal) as keys:
        created = await keys.create(principal.tenant_id, body.name, body.role)
    return NewKeyOut(**KeyOut.model_validate(created.record).model_dump(), key=created.key)


@router.get("", response_model=list[KeyOut])
async def list_keys(principal: PrincipalDep, runtime: RuntimeDep) -> list[KeyOut]:
    async with tenant_keys(runtime, principal) as keys:
        return [KeyOut.model_validate(k) for k in await keys.list(principal.tenant_id)]


@router.delete("/{key_id:uuid}", response_model=KeyOut)
async def revoke_key(key_id: UUID, principal: PrincipalDep, runtime: RuntimeDep) -> KeyOut:
    async with tenant_keys(runtime, principal) as keys:
        return KeyOut.model_validate(await keys.revoke(principal.tenant_id, key_id))
