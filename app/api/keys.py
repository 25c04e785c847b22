"""/admin/keys: an admin manages the keys of its own tenant."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import PrincipalDep, RuntimeDep
from app.api.examples import KEY_ID, KeyId, answers
from app.api.schemas import KeyIn
from app.services.keys import tenant_keys
from app.views import KeyOut, NewKeyOut, RevokedKeyOut

router = APIRouter(prefix="/admin/keys", tags=["admin"])


@router.post("", response_model=NewKeyOut, status_code=201, summary="Create a key (shown once)")
async def create_key(body: KeyIn, principal: PrincipalDep, runtime: RuntimeDep) -> NewKeyOut:
    async with tenant_keys(runtime, principal) as keys:
        created = await keys.create(principal.tenant_id, body.name, body.role)
    return NewKeyOut(**KeyOut.model_validate(created.record).model_dump(), key=created.key)


@router.get(
    "",
    response_model=list[KeyOut],
    summary="List this tenant's keys",
    responses=answers(
        [
            {
                "id": KEY_ID,
                "tenant_id": "default",
                "name": "ci-bot",
                "role": "agent",
                "prefix": "am_3f9a",
                "created_at": "2026-11-20T09:00:00Z",
                "revoked_at": None,
            }
        ]
    ),
)
async def list_keys(principal: PrincipalDep, runtime: RuntimeDep) -> list[KeyOut]:
    async with tenant_keys(runtime, principal) as keys:
        return [KeyOut.model_validate(k) for k in await keys.list(principal.tenant_id)]


@router.delete("/{key_id:uuid}", response_model=RevokedKeyOut, summary="Revoke a key")
async def revoke_key(
    key_id: KeyId,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    force: Annotated[
        bool, Query(description="Needed to revoke the tenant's last active admin key")
    ] = False,
) -> RevokedKeyOut:
    async with tenant_keys(runtime, principal) as keys:
        revoked = await keys.revoke(principal.tenant_id, key_id, force)
    return RevokedKeyOut(**KeyOut.model_validate(revoked.record).model_dump(), note=revoked.note)
