"""/audit: who changed what, and undo (admins of their own tenant)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import ServicesDep
from app.api.examples import AUDIT_ID, KEY_ID, MEMORY_ID, TIME_HELP, TIME_RULES, AuditId, answers
from app.api.rules import documented
from app.domain.audit import ACTIONS, MAX_AUDIT_PAGE, AuditQuery
from app.domain.times import time_window
from app.shapes import MemoryOut

# Parsed by the domain's rule, so that only what the schema calls a date-time passes.
# The time filter's forms (app/domain/times.py), as a search's since and until take them.
EntriesSince = Annotated[
    str | None,
    Query(
        description="Only entries at or after this time. " + TIME_HELP, json_schema_extra=TIME_RULES
    ),
]
EntriesUntil = Annotated[
    str | None,
    Query(description="Only entries before this time. " + TIME_HELP, json_schema_extra=TIME_RULES),
]

router = APIRouter(prefix="/audit", tags=["audit"])


class AuditEntryOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: UUID
    at: datetime
    actor_key: UUID | None = Field(
        description="The key that did it; null in open mode or for the service itself"
    )
    actor_role: str
    action: str
    memory_ids: list[UUID]
    before: dict[str, Any] = Field(description="Memory id -> its fields before")
    after: dict[str, Any] = Field(description="Memory id -> its fields after")
    detail: dict[str, Any]
    undone_by: UUID | None


class UndoOut(BaseModel):
    undo: AuditEntryOut
    memories: list[MemoryOut]


_EXAMPLE = {
    "id": AUDIT_ID,
    "at": "2026-11-25T09:30:00Z",
    "actor_key": KEY_ID,
    "actor_role": "admin",
    "action": "edit",
    "memory_ids": [MEMORY_ID],
    "before": {MEMORY_ID: {"version": 3, "tags": ["ci"], "pinned": False}},
    "after": {MEMORY_ID: {"version": 4, "tags": ["ci", "postgres"], "pinned": False}},
    "detail": {},
    "undone_by": None,
}


@router.get(
    "",
    response_model=list[AuditEntryOut],
    summary="The audit trail, newest first",
    responses=answers([_EXAMPLE]),
)
async def list_audit(
    services: ServicesDep,
    since: EntriesSince = None,
    until: EntriesUntil = None,
    actor_key: UUID | None = None,
    memory_id: UUID | None = None,
    action: Annotated[str | None, Query(json_schema_extra=documented(choices=ACTIONS))] = None,
    limit: Annotated[int, Query(json_schema_extra=documented(between=(1, MAX_AUDIT_PAGE)))] = 100,
) -> list[AuditEntryOut]:
    """Who changed what, newest first: edits, pins, supersedes, archives, prunes, keys,
    approvals. Admins."""
    start, end = time_window(since, until, datetime.now(UTC))
    query = AuditQuery(start, end, actor_key, memory_id, action, limit)
    return [AuditEntryOut.model_validate(e) for e in await services.audit.entries(query)]


@router.post(
    "/{entry_id:uuid}/undo",
    response_model=UndoOut,
    summary="Undo an edit, pin, supersede, archive or prune (409 if the memory changed since)",
)
async def undo(entry_id: AuditId, services: ServicesDep) -> UndoOut:
    """Undoes one audited change, unless the memory changed since (409). Admins."""
    entry, memories = await services.audit.undo(entry_id)
    return UndoOut(
        undo=AuditEntryOut.model_validate(entry), memories=[MemoryOut.of(m) for m in memories]
    )
