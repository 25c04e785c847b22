"""/recall: what the hooks hand an agent unasked, on a prompt or a failed command."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import ServicesDep
from app.api.responses import RecallOut
from app.api.schemas.recall import RecallIn

router = APIRouter(tags=["learning"])


@router.post(
    "/recall",
    response_model=RecallOut,
    summary="The few memories that bear on a prompt or an error, gated and budgeted",
)
async def recall(body: RecallIn, services: ServicesDep) -> RecallOut:
    """The few memories that clear the recall gate for a prompt, an error or a file, within a
    token budget, as compact text; what the agent's hooks hand over unasked."""
    recalled = await services.recall.recall(body.request())
    return RecallOut(text=recalled.text, ids=recalled.ids)
