"""/prune, /memories/{id}/restore, /memories/{id}/supersede, PATCH /memories/{id}, /stats."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Body, Depends, Response

from app.api.deps import (
    CanAdmin,
    CanObserve,
    CanWrite,
    MemoryServiceDep,
    PrincipalDep,
    RuntimeDep,
    UowDep,
)
from app.api.memories import to_new_memory
from app.api.schemas import (
    MemoryIn,
    MemoryOut,
    MemoryPatch,
    PruneIn,
    PruneOut,
    StoreOut,
    SupersedeOut,
)
from app.api.versions import etag, expected_version
from app.domain.validation import clean_metadata, clean_tags, clean_text
from app.services.backfill import backfill_embeddings
from app.services.lifecycle import LifecycleService, PruneReport
from app.services.stats import StatsService

router = APIRouter(tags=["lifecycle"])


async def get_lifecycle(runtime: RuntimeDep, uow: UowDep) -> LifecycleService:
    return LifecycleService(uow, runtime.settings, runtime.telemetry)


LifecycleDep = Annotated[LifecycleService, Depends(get_lifecycle, scope="function")]


def render_prune(report: PruneReport) -> PruneOut:
    return PruneOut(
        archived=report.archived,
        total_archived=report.total_archived,
        message=report.message,
        dry_run=report.dry_run,
        would_archive_ids=report.ids if report.dry_run else None,
    )


@router.post("/prune", response_model=PruneOut, dependencies=[CanAdmin])
async def prune(service: LifecycleDep, body: Annotated[PruneIn | None, Body()] = None) -> PruneOut:
    body = body or PruneIn()
    return render_prune(await service.prune(body.source_repo, body.dry_run))


@router.post("/memories/{memory_id}/restore", response_model=MemoryOut, dependencies=[CanAdmin])
async def restore(memory_id: UUID, service: LifecycleDep) -> MemoryOut:
    return MemoryOut.of(await service.restore(memory_id))


@router.post(
    "/memories/{memory_id}/supersede",
    response_model=SupersedeOut,
    status_code=201,
    dependencies=[CanWrite],
)
async def supersede(
    memory_id: UUID,
    body: MemoryIn,
    service: LifecycleDep,
    store: MemoryServiceDep,
    runtime: RuntimeDep,
    principal: PrincipalDep,
    version: Annotated[int | None, Depends(expected_version)],
) -> SupersedeOut:
    principal.require_trust(body.trust_level)
    new = to_new_memory(body, runtime.limits)
    old, outcome = await service.supersede(memory_id, new, store, version)
    return SupersedeOut(
        superseded=MemoryOut.of(old),
        replacement=StoreOut(status=outcome.status, memory=MemoryOut.of(outcome.memory)),
    )


@router.patch("/memories/{memory_id}", response_model=MemoryOut, dependencies=[CanWrite])
async def edit(
    memory_id: UUID,
    body: MemoryPatch,
    service: LifecycleDep,
    store: MemoryServiceDep,
    runtime: RuntimeDep,
    response: Response,
    version: Annotated[int | None, Depends(expected_version)],
) -> MemoryOut:
    """Send If-Match with the ETag of your read: a concurrent edit then answers 412."""
    fields: dict[str, Any] = {}
    for name in body.model_fields_set:
        value = getattr(body, name)
        if name == "tags":
            value = list(clean_tags(value or [], runtime.limits))
        elif name == "metadata":
            value = clean_metadata(value or {}, runtime.limits)
        elif name == "category" and value is not None:
            value = clean_text(value, "category") or None
        elif name in ("pinned", "confidence") and value is None:
            continue  # these columns have no "unset"
        fields[name] = value
    memory = await service.edit(memory_id, fields, store, version)
    response.headers["ETag"] = etag(memory)
    return MemoryOut.of(memory)


@router.post("/admin/backfill", dependencies=[CanAdmin])
async def backfill(runtime: RuntimeDep, principal: PrincipalDep) -> dict[str, int]:
    """Embed this tenant's memories stored while the embedding provider was down."""
    return {"filled": await backfill_embeddings(runtime, principal.tenant_id)}


@router.get("/stats", dependencies=[CanObserve])
async def stats(uow: UowDep, runtime: RuntimeDep, source_repo: str | None = None) -> dict[str, Any]:
    return await StatsService(uow, runtime.settings).stats(source_repo)
