"""Annotated dependencies: one unit of work per request, services built on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request

from app.db.session import UnitOfWork, unit_of_work
from app.domain.memory import DEFAULT_TENANT
from app.runtime import Runtime
from app.services.learning import LearningService
from app.services.memories import MemoryService
from app.services.search import SearchService


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def get_uow(runtime: RuntimeDep) -> AsyncIterator[UnitOfWork]:
    # scope="function" (below): the transaction commits before the response is sent,
    # so a client never sees a 2xx for a write that then failed to commit.
    async with unit_of_work(runtime.database, DEFAULT_TENANT) as uow:
        yield uow


UowDep = Annotated[UnitOfWork, Depends(get_uow, scope="function")]


def get_memory_service(runtime: RuntimeDep, uow: UowDep) -> MemoryService:
    return MemoryService(uow, runtime.embedder, runtime.telemetry)


def get_search_service(runtime: RuntimeDep, uow: UowDep) -> SearchService:
    return SearchService(uow, runtime.embedder, runtime.settings, runtime.telemetry)


MemoryServiceDep = Annotated[MemoryService, Depends(get_memory_service, scope="function")]


def get_learning_service(runtime: RuntimeDep, memories: MemoryServiceDep) -> LearningService:
    return LearningService(memories, runtime.settings, runtime.limits)


LearningServiceDep = Annotated[LearningService, Depends(get_learning_service, scope="function")]
SearchServiceDep = Annotated[SearchService, Depends(get_search_service, scope="function")]
