"""What MCP tools answer an agent after a write: the outcome in a line, not the row echoed
back (the agent just sent it), so that each call costs tens of tokens, not hundreds."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from app.domain.memory import StoreOutcome, outcome_note
from app.domain.sessions import Session
from app.shapes import CaptureSettings

if TYPE_CHECKING:
    from app.services.lifecycle import PruneReport


class StoredBrief(BaseModel):
    status: Literal["stored", "reinforced"]
    message: str
    id: UUID
    may_supersede: UUID | None = None


def store_message(outcome: StoreOutcome) -> str:
    memory = outcome.memory
    label = f"{memory.name or memory.content[:60]} ({memory.category or memory.memory_type})"
    note = outcome_note(outcome)
    if outcome.status == "stored":
        return f"Stored: {label}{note}"
    return f"Reinforced: {label} — observation count incremented{note}"


def render_store_brief(outcome: StoreOutcome) -> StoredBrief:
    memory = outcome.memory
    return StoredBrief(
        status=outcome.status,
        message=store_message(outcome),
        id=memory.id,
        may_supersede=outcome.may_supersede,
    )


class SessionStartBrief(BaseModel):
    session_id: UUID
    pruning: str | None = Field(description="What the start's pruning did; null if it failed.")
    capture: CaptureSettings


def render_session_start_brief(
    session: Session, pruning: PruneReport | None, capture: dict[str, Any]
) -> SessionStartBrief:
    return SessionStartBrief(
        session_id=session.id,
        pruning=pruning.message if pruning else None,
        capture=CaptureSettings(**capture),
    )


class SessionEndBrief(BaseModel):
    session_id: UUID
    status: str
    ended_at: datetime | None


def render_session_end_brief(session: Session) -> SessionEndBrief:
    return SessionEndBrief(session_id=session.id, status=session.status, ended_at=session.ended_at)
