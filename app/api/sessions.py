"""/sessions and /snapshot: what an agent is handed when it starts work."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Depends, Query
from fastapi.responses import PlainTextResponse

from app.api.deps import CanRead, CanWrite, PrincipalDep, RuntimeDep, UowDep
from app.api.lifecycle import render_prune
from app.api.schemas import CaptureSettings, SessionEndIn, SessionIn, SessionOut, SessionStartOut
from app.domain.snapshot import render_json, render_markdown
from app.repository.sessions import Session
from app.services.sessions import SessionService, prune_quietly

router = APIRouter(tags=["sessions"])


async def get_sessions(runtime: RuntimeDep, uow: UowDep) -> SessionService:
    return SessionService(uow, runtime.settings)


SessionsDep = Annotated[SessionService, Depends(get_sessions, scope="function")]


def render_session(session: Session) -> SessionOut:
    return SessionOut.model_validate(session)


@router.post("/sessions", response_model=SessionStartOut, status_code=201, dependencies=[CanWrite])
async def start_session(
    body: SessionIn, service: SessionsDep, runtime: RuntimeDep, principal: PrincipalDep
) -> SessionStartOut:
    report = await prune_quietly(runtime, principal.tenant_id, body.source_repo)
    session = await service.start(body.source_repo, body.agent, body.task)
    return SessionStartOut(
        session_id=session.id,
        session=render_session(session),
        pruning=render_prune(report) if report else None,
        capture=CaptureSettings(**service.capture_settings()),
    )


@router.post("/sessions/{session_id}/end", response_model=SessionOut, dependencies=[CanWrite])
async def end_session(session_id: UUID, body: SessionEndIn, service: SessionsDep) -> SessionOut:
    changes = [c.model_dump(exclude_none=True) for c in body.key_changes]
    return render_session(await service.end(session_id, body.status, body.summary, changes))


@router.get(
    "/snapshot",
    response_model=None,
    dependencies=[CanRead],
    responses={
        200: {
            "description": "Markdown by default; JSON with format=json",
            "content": {"text/markdown": {"schema": {"type": "string"}}, "application/json": {}},
        }
    },
)
async def snapshot(
    service: SessionsDep,
    source_repo: str | None = None,
    format: Literal["markdown", "json"] = "markdown",
    max_chars: Annotated[int | None, Query(ge=100, le=200_000)] = None,
) -> PlainTextResponse | dict[str, Any]:
    built = await service.snapshot(source_repo, max_chars)
    if format == "json":
        return render_json(built)
    return PlainTextResponse(render_markdown(built), media_type="text/markdown; charset=utf-8")
