"""Agents that learn: /strategies, /remember, /retry-context, /memories/{id}/feedback."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app.api.deps import ServicesDep
from app.api.examples import REPO, MemoryId
from app.api.responses import RememberOut, RetryContextOut, render_remember
from app.api.rules import line_rules, text_rules
from app.api.schemas.learning import FeedbackIn, RememberIn, RetryContextIn, StrategyLearnIn
from app.shapes import HintOut, MemoryOut, StrategyLearnOut, render_hint, render_learned

router = APIRouter(tags=["learning"])


@router.post(
    "/strategies/learn",
    summary="Learn a strategy from a first-attempt success",
    response_model=StrategyLearnOut,
    responses={201: {"model": StrategyLearnOut, "description": "A new strategy was stored"}},
)
async def learn_strategy(
    body: StrategyLearnIn, services: ServicesDep, response: Response
) -> StrategyLearnOut:
    """Records what worked on the first attempt of a task as a strategy, or reinforces the one
    already learned for that kind of task."""
    result = await services.learning.learn_strategy(body.request())
    if result.status == "stored":
        response.status_code = status.HTTP_201_CREATED
    return render_learned(result)


@router.get("/strategies/hint", response_model=HintOut, summary="A strategy hint before planning")
async def get_strategy_hint(
    task: Annotated[
        str,
        Query(
            examples=["Add a column with a backfill"], json_schema_extra=text_rules(required=True)
        ),
    ],
    source_repo: Annotated[
        str, Query(examples=[REPO], json_schema_extra=line_rules("source_repo", required=True))
    ],
    services: ServicesDep,
) -> HintOut:
    """The learned strategies that bear on a task about to be planned, best first."""
    return render_hint(await services.learning.hint(task, source_repo))


@router.post(
    "/memories/{memory_id:uuid}/feedback",
    response_model=MemoryOut,
    summary="Say whether a memory helped",
)
async def feedback(memory_id: MemoryId, body: FeedbackIn, services: ServicesDep) -> MemoryOut:
    """Says whether a memory helped: its relevance moves up or down within bounds (feedback
    on a memory of a higher trust than the caller's never sinks it below the trusted floor)."""
    return MemoryOut.of(await services.feedback.record(memory_id, body.outcome))


@router.post(
    "/remember",
    summary="Record a learning",
    response_model=RememberOut,
    status_code=status.HTTP_201_CREATED,
    responses={200: {"model": RememberOut, "description": "Known learning: reinforced"}},
)
async def remember(body: RememberIn, services: ServicesDep, response: Response) -> RememberOut:
    """Records a learning in a few words, its category inferred from them; the same learning
    again reinforces the stored one. `trust_level: user` (an admin key, or open mode) makes
    it a person's own note: never held because an agent session read a page."""
    result = await services.learning.remember(body.request())
    if result.outcome.status == "reinforced":
        response.status_code = status.HTTP_200_OK
    return render_remember(result)


@router.post(
    "/retry-context", response_model=RetryContextOut, summary="What changed since the last attempt"
)
async def build_retry_context(body: RetryContextIn, services: ServicesDep) -> RetryContextOut:
    """For a retry: the task, the plan, the latest error and each changed file's diff since the
    last attempt, instead of the whole context again, with the tokens that saves."""
    return RetryContextOut.model_validate(await services.learning.retry_context(body.request()))
