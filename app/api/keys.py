"""/admin/keys: an admin manages the keys of its own tenant."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import ServicesDep
from app.api.examples import KEY_ID, KeyId, answers
from app.api.responses import KeyOut, NewKeyOut, RevokedKeyOut
from app.api.schemas.keys import KeyIn

router = APIRouter(prefix="/admin/keys", tags=["admin"])


@router.post("", response_model=NewKeyOut, status_code=201, summary="Create a key (shown once)")
async def create_key(body: KeyIn, services: ServicesDep) -> NewKeyOut:
    """Creates an API key and shows it once. In open mode the first key ends open mode: make it
    an admin key. Admins."""
    created = await services.keys.create(
        services.principal.tenant_id, body.name, body.role, body.person
    )
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
async def list_keys(services: ServicesDep) -> list[KeyOut]:
    """This tenant's API keys: name, role, the key's first characters, when made and revoked;
    never the key itself. Admins."""
    keys = await services.keys.list(services.principal.tenant_id)
    return [KeyOut.model_validate(k) for k in keys]


@router.delete("/{key_id:uuid}", response_model=RevokedKeyOut, summary="Revoke a key")
async def revoke_key(
    key_id: KeyId,
    services: ServicesDep,
    force: Annotated[
        bool, Query(description="Needed to revoke the tenant's last active admin key")
    ] = False,
) -> RevokedKeyOut:
    """Revokes a key at once; requests with it are refused from then on. Admins."""
    revoked = await services.keys.revoke(services.principal.tenant_id, key_id, force)
    return RevokedKeyOut(**KeyOut.model_validate(revoked.record).model_dump(), note=revoked.note)
