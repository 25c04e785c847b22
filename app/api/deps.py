"""Annotated dependencies: one unit of work per request, services built on it.

Every dependency here is `async def`, even those that never await: FastAPI runs a plain
`def` dependency in a worker thread, one thread hop per dependency per request, for work
that takes microseconds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, Request

from app.db.session import UnitOfWork, unit_of_work
from app.domain.errors import UnauthorizedError
from app.runtime import Runtime
from app.services.auth import Principal
from app.services.learning import LearningService
from app.services.memories import MemoryService
from app.services.search import SearchService


async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


# Where a key must never travel: URLs end up in logs, proxies and browser history.
_KEY_QUERY_PARAMS = ("api_key", "apikey", "key", "token", "access_token")


async def get_principal(request: Request, runtime: RuntimeDep) -> Principal:
    if any(name in request.query_params for name in _KEY_QUERY_PARAMS):
        raise UnauthorizedError(
            "API keys are accepted only in the Authorization header, never in the URL"
        )
    header = request.headers.get("authorization")
    bearer = None
    if header is not None:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise UnauthorizedError("use Authorization: Bearer <key>")
        bearer = token.strip()
    return await runtime.authenticator.authenticate(bearer)


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def capability(name: str) -> Any:
    async def check(principal: PrincipalDep) -> None:
        principal.require(name)

    return Depends(check)


CanRead = capability("read")
CanWrite = capability("write")
CanObserve = capability("observe")
CanAdmin = capability("admin")


async def get_uow(runtime: RuntimeDep, principal: PrincipalDep) -> AsyncIterator[UnitOfWork]:
    # The tenant comes from the key, never from the request.
    # scope="function" (below): the transaction commits before the response is sent,
    # so a client never sees a 2xx for a write that then failed to commit.
    async with unit_of_work(runtime.database, principal.tenant_id, principal.key_id) as uow:
        yield uow


UowDep = Annotated[UnitOfWork, Depends(get_uow, scope="function")]


async def get_memory_service(runtime: RuntimeDep, uow: UowDep) -> MemoryService:
    return MemoryService(uow, runtime.embedder, runtime.telemetry)


async def get_search_service(runtime: RuntimeDep, uow: UowDep) -> SearchService:
    return SearchService(uow, runtime.embedder, runtime.settings, runtime.telemetry)


MemoryServiceDep = Annotated[MemoryService, Depends(get_memory_service, scope="function")]


async def get_learning_service(runtime: RuntimeDep, memories: MemoryServiceDep) -> LearningService:
    return LearningService(memories, runtime.settings, runtime.limits)


LearningServiceDep = Annotated[LearningService, Depends(get_learning_service, scope="function")]
SearchServiceDep = Annotated[SearchService, Depends(get_search_service, scope="function")]
