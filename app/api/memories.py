"""/memories: store (single and batch), read, list, delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app.api.deps import ServicesDep
from app.api.examples import MemoryId
from app.api.queries import ListQueryIn
from app.api.responses import BatchOut, MemoryPage
from app.api.schemas import BatchIn, MemoryIn
from app.api.versions import etag
from app.shapes import MemoryOut, StoreOut, render_store

router = APIRouter(prefix="/memories", tags=["memories"])

IncludeQuarantined = Annotated[
    bool,
    Query(
        description="Admins only: also quarantined memories (imported as such, or changed"
        " outside the API), which no agent is ever handed"
    ),
]


@router.post(
    "",
    summary="Store a memory",
    response_model=StoreOut,
    status_code=status.HTTP_201_CREATED,
    responses={200: {"model": StoreOut, "description": "Known content: reinforced"}},
)
async def store_memory(body: MemoryIn, services: ServicesDep, response: Response) -> StoreOut:
    outcome = await services.memories.store(body.draft())
    if outcome.status == "reinforced":
        response.status_code = status.HTTP_200_OK
    return render_store(outcome)


@router.post("/batch", response_model=BatchOut, summary="Store many memories at once")
async def store_batch(body: BatchIn, services: ServicesDep) -> BatchOut:
    outcomes = await services.memories.store_batch([m.draft() for m in body.memories])
    return BatchOut(results=[render_store(o) for o in outcomes])


@router.get("", response_model=MemoryPage, summary="List memories, newest first")
async def list_memories(
    services: ServicesDep, query: Annotated[ListQueryIn, Query()]
) -> MemoryPage:
    page = await services.memories.list_page(query.draft())
    return MemoryPage(
        memories=[MemoryOut.of(m) for m in page.memories], next_cursor=page.next_cursor
    )


@router.get("/{memory_id:uuid}", response_model=MemoryOut, summary="One memory")
async def get_memory(
    memory_id: MemoryId,
    services: ServicesDep,
    response: Response,
    include_quarantined: IncludeQuarantined = False,
) -> MemoryOut:
    memory = await services.memories.get(memory_id, include_quarantined)
    response.headers["ETag"] = etag(memory)
    return MemoryOut.of(memory)


@router.delete(
    "/{memory_id:uuid}", status_code=status.HTTP_204_NO_CONTENT, summary="Delete a memory"
)
async def delete_memory(memory_id: MemoryId, services: ServicesDep) -> Response:
    await services.memories.delete(memory_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
