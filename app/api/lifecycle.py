"""/prune, /memories/{id}/restore, /memories/{id}/supersede, PATCH /memories/{id}, /stats."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Body, Depends, Response

from app.api.deps import PrincipalDep, RuntimeDep, ServicesDep
from app.api.schemas import MemoryIn, MemoryPatch, PruneIn
from app.api.versions import etag, expected_version
from app.services.backfill import backfill_for
from app.views import MemoryOut, PruneOut, SupersedeOut, render_prune, render_store

router = APIRouter(tags=["lifecycle"])

VersionDep = Annotated[int | None, Depends(expected_version)]


@router.post("/prune", response_model=PruneOut)
async def prune(services: ServicesDep, body: Annotated[PruneIn | None, Body()] = None) -> PruneOut:
    body = body or PruneIn()
    return render_prune(await services.lifecycle.prune(body.source_repo, body.dry_run))


@router.post("/memories/{memory_id:uuid}/restore", response_model=MemoryOut)
async def restore(memory_id: UUID, services: ServicesDep) -> MemoryOut:
    return MemoryOut.of(await services.lifecycle.restore(memory_id))


@router.post("/memories/{memory_id:uuid}/supersede", response_model=SupersedeOut, status_code=201)
async def supersede(
    memory_id: UUID, body: MemoryIn, services: ServicesDep, version: VersionDep
) -> SupersedeOut:
    old, outcome = await services.lifecycle.supersede(
        memory_id, body.draft(), services.memories, version
    )
    return SupersedeOut(superseded=MemoryOut.of(old), replacement=render_store(outcome))


@router.patch("/memories/{memory_id:uuid}", response_model=MemoryOut)
async def edit(
    memory_id: UUID,
    body: MemoryPatch,
    services: ServicesDep,
    response: Response,
    version: VersionDep,
) -> MemoryOut:
    """Send If-Match with the ETag of your read: a concurrent edit then answers 412."""
    memory = await services.lifecycle.edit(memory_id, body.changes(), services.memories, version)
    response.headers["ETag"] = etag(memory)
    return MemoryOut.of(memory)


@router.post("/admin/backfill")
async def backfill(runtime: RuntimeDep, principal: PrincipalDep) -> dict[str, int]:
    """Embed this tenant's memories stored while the embedding provider was down."""
    return {"filled": await backfill_for(runtime, principal)}


@router.get("/stats")
async def stats(services: ServicesDep, source_repo: str | None = None) -> dict[str, Any]:
    return await services.stats.stats(source_repo)
