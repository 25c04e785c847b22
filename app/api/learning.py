"""Agents that learn: /strategies, /remember, /retry-context, /memories/{id}/feedback."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter, Response, status

from app.api.deps import (
    CanRead,
    CanWrite,
    LearningServiceDep,
    PrincipalDep,
    RuntimeDep,
    UowDep,
)
from app.api.schemas import (
    FeedbackIn,
    HintOut,
    MemoryOut,
    RememberIn,
    RememberOut,
    RetryContextIn,
    RetryContextOut,
    StrategyLearnIn,
    StrategyLearnOut,
)
from app.domain.diffs import retry_context
from app.repository.memories import FeedbackRepository
from app.services.learning import FeedbackService, LearningService, StrategyAttempt, strategy_hint

router = APIRouter(tags=["learning"])


@router.post("/strategies/learn", response_model=StrategyLearnOut, dependencies=[CanWrite])
async def learn_strategy(
    body: StrategyLearnIn, service: LearningServiceDep, response: Response
) -> StrategyLearnOut:
    result = await service.learn_strategy(
        StrategyAttempt(
            task_description=body.task_description,
            plan_steps=body.plan_steps,
            plan_summary=body.plan_summary,
            attempt_history=[a.model_dump() for a in body.attempt_history],
            total_attempts=body.total_attempts,
            quality_score=body.quality_score,
            files_changed=body.files_changed,
            model=body.model,
            source_repo=body.source_repo,
            task_id=body.task_id,
        )
    )
    if result.status == "stored":
        response.status_code = status.HTTP_201_CREATED
    memory = MemoryOut.of(result.memory) if result.memory else None
    return StrategyLearnOut(status=result.status, reason=result.reason, memory=memory)


@router.get("/strategies/hint", response_model=HintOut, dependencies=[CanRead])
async def get_strategy_hint(
    task: str, source_repo: str, runtime: RuntimeDep, principal: PrincipalDep
) -> HintOut:
    hint = await strategy_hint(runtime, principal.tenant_id, task, source_repo)
    strategy = MemoryOut.of(hint.strategy) if hint.strategy else None
    return HintOut(hint=hint.hint, similarity=hint.similarity, strategy=strategy)


@router.post("/memories/{memory_id}/feedback", response_model=MemoryOut, dependencies=[CanWrite])
async def feedback(
    memory_id: UUID, body: FeedbackIn, uow: UowDep, runtime: RuntimeDep
) -> MemoryOut:
    service = FeedbackService(FeedbackRepository(uow), runtime.settings)
    return MemoryOut.of(await service.record(memory_id, body.outcome))


@router.post(
    "/remember",
    response_model=RememberOut,
    status_code=status.HTTP_201_CREATED,
    dependencies=[CanWrite],
)
async def remember(
    body: RememberIn, service: LearningServiceDep, response: Response
) -> RememberOut:
    result = await service.remember(
        body.text,
        source_repo=body.source_repo,
        category=body.category,
        name=body.name,
        reasoning=body.reasoning,
        confidence=body.confidence,
        references=body.references,
        context=body.context,
    )
    reinforced = result.outcome.status == "reinforced"
    if reinforced:
        response.status_code = status.HTTP_200_OK
    return RememberOut(
        status=result.outcome.status,
        message=LearningService.remember_message(result),
        observation_count=result.outcome.memory.observation_count if reinforced else None,
        memory=MemoryOut.of(result.outcome.memory),
    )


@router.post("/retry-context", response_model=RetryContextOut, dependencies=[CanWrite])
async def build_retry_context(body: RetryContextIn) -> RetryContextOut:
    context = retry_context(
        task_description=body.task_description,
        plan_summary=body.plan_summary,
        current_files=[f.model_dump() for f in body.current_files],
        previous_files=[f.model_dump() for f in body.previous_files],
        validation_output=body.validation_output,
        diagnosis=body.diagnosis.model_dump() if body.diagnosis else None,
        attempt_number=body.attempt_number,
        full_context_tokens=body.full_context_tokens,
    )
    return RetryContextOut.model_validate(context)
