"""/sessions and /snapshot: what an agent is handed when it starts work."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from fastapi.responses import PlainTextResponse

from app.api.deps import ServicesDep
from app.api.examples import MaxTokens, SessionId, SourceRepo
from app.api.responses import (
    DraftOut,
    DraftsHeldOut,
    DraftsOut,
    SessionOut,
    SessionStartOut,
    SourcesHeldOut,
    render_session,
    render_session_start,
)
from app.api.rules import documented
from app.api.schemas.sessions import DraftIn, SessionEndIn, SessionIn, SourcesIn
from app.domain.inputs.budgets import MAX_SNAPSHOT_CHARS, MIN_SNAPSHOT_CHARS
from app.domain.sessions import MAX_SESSION_PAGE
from app.domain.snapshot import render_json, render_markdown

router = APIRouter(tags=["sessions"])


@router.post(
    "/sessions", response_model=SessionStartOut, status_code=201, summary="Start a session"
)
async def start(body: SessionIn, services: ServicesDep) -> SessionStartOut:
    """Starts an agent's session in a repository: its id, the capture settings, and how many
    memories about files changed since are now marked possibly stale (GET /snapshot hands
    over what to know)."""
    started = await services.sessions.start(body.request())
    return render_session_start(
        started.session, started.pruning, started.capture, started.marked_stale
    )


@router.get("/sessions", response_model=list[SessionOut], summary="Recent sessions, newest first")
async def recent(
    services: ServicesDep,
    source_repo: SourceRepo = None,
    limit: Annotated[int, Query(json_schema_extra=documented(between=(1, MAX_SESSION_PAGE)))] = 20,
) -> list[SessionOut]:
    """The tenant's recent sessions, newest first, optionally one repository's."""
    return [render_session(s) for s in await services.sessions.recent(source_repo, limit)]


@router.post("/sessions/{session_id:uuid}/end", response_model=SessionOut, summary="End a session")
async def end_session(
    session_id: SessionId, body: SessionEndIn, services: ServicesDep
) -> SessionOut:
    """Ends a session with its outcome (completed, failed, abandoned), its summary and the
    key changes; the drafts it still holds go to the review queue (GET /drafts)."""
    return render_session(await services.sessions.end(session_id, body.request()))


@router.post(
    "/sessions/{session_id:uuid}/drafts",
    response_model=DraftsHeldOut,
    status_code=201,
    summary="Draft a learning the hooks saw (never a memory; for a person once the session ends)",
)
async def add_draft(session_id: SessionId, body: DraftIn, services: ServicesDep) -> DraftsHeldOut:
    """Keeps a learning the hooks noticed as a draft for the agent to confirm; never a memory
    by itself."""
    return DraftsHeldOut(held=await services.sessions.add_draft(session_id, body.request()))


@router.get(
    "/sessions/{session_id:uuid}/drafts",
    response_model=DraftsOut,
    summary="A session's drafts, oldest first",
)
async def drafts(session_id: SessionId, services: ServicesDep) -> DraftsOut:
    """A session's drafts, oldest first, with the untrusted sources the session read."""
    found, sources = await services.sessions.drafts(session_id)
    return DraftsOut(drafts=[DraftOut(**d) for d in found], sources=sources)


@router.post(
    "/sessions/{session_id:uuid}/sources",
    response_model=SourcesHeldOut,
    summary="Record that a session read untrusted input (a web page, another server's tool)",
    description="The hooks call this when the agent brought in content from outside the"
    " repository and the user. While the session is open, a memory written for its"
    " repository carries these sources and, by UNTRUSTED_MEMORIES (default `wait`), waits"
    " for a person's approval before any other session is handed it unasked.",
)
async def add_sources(
    session_id: SessionId, body: SourcesIn, services: ServicesDep
) -> SourcesHeldOut:
    return SourcesHeldOut(sources=await services.sessions.add_sources(session_id, body.sources))


@router.delete("/sessions/{session_id:uuid}", status_code=204, summary="Delete a session (admins)")
async def delete_session(session_id: SessionId, services: ServicesDep) -> Response:
    """Deletes a session and its drafts (its memories stay). Admins."""
    await services.sessions.delete(session_id)
    return Response(status_code=204)


@router.get(
    "/snapshot",
    summary="What an agent should know at the start",
    response_model=None,
    responses={
        200: {
            "description": "Markdown by default; JSON with format=json",
            "content": {"text/markdown": {"schema": {"type": "string"}}, "application/json": {}},
        }
    },
)
async def snapshot(
    services: ServicesDep,
    source_repo: SourceRepo = None,
    format: Literal["markdown", "json"] = "markdown",
    max_chars: Annotated[
        int | None,
        Query(json_schema_extra=documented(between=(MIN_SNAPSHOT_CHARS, MAX_SNAPSHOT_CHARS))),
    ] = None,
    max_tokens: MaxTokens = None,
) -> PlainTextResponse | dict[str, Any]:
    """What an agent should know at the start of a session in a repository, recency-graded,
    within a size budget."""
    built = await services.sessions.snapshot(source_repo, max_chars, max_tokens)
    if format == "json":
        return render_json(built)
    return PlainTextResponse(render_markdown(built), media_type="text/markdown; charset=utf-8")
