"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.api.deps import RuntimeDep
from app.api.examples import answers
from app.services.health import readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness: the process is up", responses=answers({"status": "ok"}))
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="Readiness: database up, schema at head, buffers read back after a start",
    responses={
        **answers({"status": "ok", "database": "ok", "schema": "0017"}),
        503: {"description": "Not ready", "content": {"application/json": {}}},
    },
)
async def readyz(runtime: RuntimeDep) -> JSONResponse:
    """The database answers, its schema is at the migration head, and after a start it has
    read back what its buffers held (at most PREWARM_WAIT_S: then ready anyway)."""
    found = await readiness(runtime)
    if found.database != "ok":
        return JSONResponse(
            {"status": "unavailable", "database": "unreachable"},
            status_code=503,
            headers={"Retry-After": "2"},
        )
    if found.warming and found.schema == found.expected:
        return JSONResponse(
            {
                "status": "unavailable",
                "database": "ok",
                "schema": found.schema,
                "warming": "the database is reading back what its buffers held before its"
                " start (autoprewarm)",
            },
            status_code=503,
            headers={"Retry-After": "1"},
        )
    if not found.ready:
        return JSONResponse(
            {
                "status": "unavailable",
                "database": "ok",
                "schema": found.schema,
                "expected": found.expected,
                "hint": "run `agent-memory migrate`",
            },
            status_code=503,
        )
    return JSONResponse({"status": "ok", "database": "ok", "schema": found.schema})
