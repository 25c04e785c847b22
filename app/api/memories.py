"""/memories: store (single and batch), read, list, delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status

from app.api.deps import ServicesDep
from app.api.examples import MemoryId
from app.api.queries import ListQueryIn
from app.api.responses import BatchOut, MemoryPage
from app.api.rules import documented
from app.api.schemas.memories import BatchIn, MemoryIn
from app.api.versions import etag
from app.domain.id_prefix import ID_PREFIX_PATTERN, MAX_PREFIX_CHARS
from app.domain.memory import Memory
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
    """Stores one memory under a repository (`source_repo`, or null for a global one). The same
    content again in the same repository reinforces the stored memory (200) instead of
    adding a copy."""
    outcome = await services.memories.store(body.request())
    if outcome.status == "reinforced":
        response.status_code = status.HTTP_200_OK
    return render_store(outcome)


@router.post("/batch", response_model=BatchOut, summary="Store many memories at once")
async def store_batch(body: BatchIn, services: ServicesDep) -> BatchOut:
    """Stores up to the batch limit of memories in one request, each answered as `POST
    /memories` would be, in order; one refused item refuses the whole batch."""
    outcomes = await services.memories.store_batch([m.request() for m in body.memories])
    return BatchOut(results=[render_store(o) for o in outcomes])


@router.get("", response_model=MemoryPage, summary="List memories, newest first")
async def list_memories(
    services: ServicesDep, query: Annotated[ListQueryIn, Query()]
) -> MemoryPage:
    """The memories that pass the filters, newest first, a page at a time (`next_cursor`
    continues). A repository's list includes the global memories unless `scope=repo`."""
    page = await services.memories.list_page(query.request())
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
    """One memory, whole, with an ETag to send as If-Match when changing it."""
    return with_etag(await services.memories.get(memory_id, include_quarantined), response)


@router.get(
    "/by-prefix/{prefix}",
    response_model=MemoryOut,
    summary="One memory, by the start of its id",
    description="The memory whose id starts with `prefix` (6 or more hex digits, as a listing"
    " shows them). 409 names the ids when more than one does: give more of the id.",
)
async def get_memory_by_prefix(
    prefix: Annotated[
        str,
        Path(
            # The domain's rule, documented; id_prefix() applies it, with its own words.
            json_schema_extra=documented(chars=MAX_PREFIX_CHARS, pattern=ID_PREFIX_PATTERN),
            examples=["0193c0de-5a1e"],
        ),
    ],
    services: ServicesDep,
    response: Response,
    include_quarantined: IncludeQuarantined = False,
) -> MemoryOut:
    return with_etag(await services.memories.by_prefix(prefix, include_quarantined), response)


def with_etag(memory: Memory, response: Response) -> MemoryOut:
    """A memory as read, with the version a change must name (If-Match)."""
    response.headers["ETag"] = etag(memory)
    return MemoryOut.of(memory)


@router.delete(
    "/{memory_id:uuid}", status_code=status.HTTP_204_NO_CONTENT, summary="Delete a memory"
)
async def delete_memory(memory_id: MemoryId, services: ServicesDep) -> Response:
    """Deletes a memory for good (archiving keeps it instead); recorded in the audit trail."""
    await services.memories.delete(memory_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
