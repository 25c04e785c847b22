"""The Sessions page: recent sessions with their summaries, the snapshot an agent would get
now, and a session ended or deleted by its owner."""

from __future__ import annotations

from uuid import UUID

from fastapi import Request, Response

from app.console.auth import Csrf, check_csrf
from app.console.pages import (
    PAGE_SIZE,
    RuntimeDep,
    Text,
    back_to,
    blank_to_none,
    console_router,
    page,
    services_of,
)
from app.domain.errors import NotFoundError
from app.domain.sessions import SessionEnd
from app.domain.snapshot import render_markdown

router = console_router()


@router.get("/console/sessions")
async def sessions_page(
    request: Request, runtime: RuntimeDep, source_repo: Text = None
) -> Response:
    """Recent sessions with their summaries, and the snapshot an agent would get now."""
    repo = blank_to_none(source_repo)
    async with services_of(request, runtime) as services:
        sessions = await services.sessions.recent(repo, PAGE_SIZE)
        snapshot = await services.sessions.snapshot(repo, None)
    return page(
        request,
        "sessions.html",
        {
            "nav": "sessions",
            "form": {"source_repo": repo or ""},
            "sessions": sessions,
            "snapshot": render_markdown(snapshot),
        },
    )


@router.post("/console/sessions/{session_id:uuid}/{action}")
async def session_action(
    request: Request,
    runtime: RuntimeDep,
    session_id: UUID,
    action: str,
    csrf_token: Csrf = "",
) -> Response:
    check_csrf(request, csrf_token)
    if action not in ("end", "delete"):
        raise NotFoundError(f"no action {action[:40]!r}")
    async with services_of(request, runtime) as services:
        if action == "end":
            # Its owner closed it; the agent reported nothing: not a result for the snapshot.
            ended = SessionEnd(status="abandoned", summary="ended by its owner from the console")
            await services.sessions.end(session_id, ended)
        else:
            await services.sessions.delete(session_id)
    return back_to("/console/sessions")
