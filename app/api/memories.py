"""/memories: store (single and batch), read, list, delete."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query, Response, status

from app.api.deps import CanAdmin, CanRead, CanWrite, MemoryServiceDep, PrincipalDep, RuntimeDep
from app.api.schemas import BatchIn, BatchOut, MemoryIn, MemoryOut, MemoryPage, StoreOut
from app.api.versions import etag
from app.domain.errors import InvalidInputError, PayloadTooLargeError
from app.domain.memory import NewMemory
from app.domain.validation import (
    Limits,
    clean_content,
    clean_context,
    clean_metadata,
    clean_tags,
    clean_text,
)
from app.repository.memories import ListFilter

router = APIRouter(prefix="/memories", tags=["memories"])


def to_new_memory(body: MemoryIn, limits: Limits) -> NewMemory:
    def optional(value: str | None, field: str) -> str | None:
        return (clean_text(value, field) or None) if value is not None else None

    return NewMemory(
        content=clean_content(body.content, limits),
        memory_type=body.memory_type,
        category=optional(body.category, "category"),
        tags=clean_tags(body.tags, limits),
        source_repo=optional(body.source_repo, "source_repo"),
        task_id=optional(body.task_id, "task_id"),
        trust_level=body.trust_level,
        confidence=body.confidence,
        pinned=body.pinned,
        source=clean_text(body.source, "source") or "api",
        name=optional(body.name, "name"),
        metadata=clean_metadata(body.metadata, limits),
        context=clean_context(body.context, limits),
    )


@router.post(
    "",
    response_model=StoreOut,
    status_code=status.HTTP_201_CREATED,
    responses={200: {"model": StoreOut, "description": "Known content: reinforced"}},
    dependencies=[CanWrite],
)
async def store_memory(
    body: MemoryIn,
    service: MemoryServiceDep,
    runtime: RuntimeDep,
    response: Response,
    principal: PrincipalDep,
) -> StoreOut:
    principal.require_trust(body.trust_level)
    try:
        new = to_new_memory(body, runtime.limits)
    except InvalidInputError:
        runtime.telemetry.rejected()
        raise
    outcome = await service.store(new)
    if outcome.status == "reinforced":
        response.status_code = status.HTTP_200_OK
    return StoreOut(status=outcome.status, memory=MemoryOut.of(outcome.memory))


@router.post("/batch", response_model=BatchOut, dependencies=[CanWrite])
async def store_batch(
    body: BatchIn, service: MemoryServiceDep, runtime: RuntimeDep, principal: PrincipalDep
) -> BatchOut:
    limit = runtime.settings.max_batch
    if len(body.memories) > limit:
        raise PayloadTooLargeError(
            f"a batch holds at most {limit} memories, got {len(body.memories)}", field="memories"
        )
    items = []
    for index, item in enumerate(body.memories):
        principal.require_trust(item.trust_level)
        try:
            items.append(to_new_memory(item, runtime.limits))
        except InvalidInputError as exc:
            runtime.telemetry.rejected()
            # Nothing of the batch is written when one item is bad.
            raise InvalidInputError(exc.detail, field=f"memories.{index}.{exc.field}") from exc
    outcomes = await service.store_batch(items)
    return BatchOut(
        results=[StoreOut(status=o.status, memory=MemoryOut.of(o.memory)) for o in outcomes]
    )


def _encode_cursor(created_at: datetime, memory_id: UUID) -> str:
    return base64.urlsafe_b64encode(f"{created_at.isoformat()}|{memory_id}".encode()).decode()


def _decode_cursor(cursor: str) -> tuple[datetime, UUID]:
    try:
        created, _, memory_id = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        return datetime.fromisoformat(created), UUID(memory_id)
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise InvalidInputError("cursor is not one this server issued", field="cursor") from exc


@router.get("", response_model=MemoryPage, dependencies=[CanRead])
async def list_memories(
    service: MemoryServiceDep,
    memory_type: Annotated[list[str] | None, Query()] = None,
    source_repo: str | None = None,
    tags: Annotated[list[str] | None, Query()] = None,
    include_archived: bool = False,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: str | None = None,
) -> MemoryPage:
    after = _decode_cursor(cursor) if cursor else None
    filters = ListFilter(memory_type, source_repo, tags, include_archived)
    memories = await service.list(filters, limit + 1, after)
    page, more = memories[:limit], len(memories) > limit
    next_cursor = _encode_cursor(page[-1].created_at, page[-1].id) if more else None
    return MemoryPage(memories=[MemoryOut.of(m) for m in page], next_cursor=next_cursor)


@router.get("/{memory_id}", response_model=MemoryOut, dependencies=[CanRead])
async def get_memory(memory_id: UUID, service: MemoryServiceDep, response: Response) -> MemoryOut:
    memory = await service.get(memory_id)
    response.headers["ETag"] = etag(memory)
    return MemoryOut.of(memory)


@router.delete("/{memory_id}", status_code=status.HTTP_204_NO_CONTENT, dependencies=[CanAdmin])
async def delete_memory(memory_id: UUID, service: MemoryServiceDep) -> Response:
    await service.delete(memory_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
