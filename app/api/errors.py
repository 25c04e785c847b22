"""Every error answered one way: RFC 9457 problem details, never a traceback."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.domain.errors import AppError, RetryLaterError
from app.domain.problems import invalid_input_problem, problem_of
from app.embeddings.base import EmbeddingError
from app.services.health import is_connection_error

logger = logging.getLogger("agent_memory.errors")

PROBLEM_JSON = "application/problem+json"


def problem(
    request: Request,
    status: int,
    title: str,
    detail: str,
    *,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": request.url.path,
    }
    if errors:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    body = invalid_input_problem(list(exc.errors()), exc.body)
    return problem(request, 422, body["title"], body["detail"], errors=body["errors"])


async def app_error_response(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    headers = None
    if isinstance(exc, RetryLaterError):
        headers = {"Retry-After": str(exc.retry_after_s)}
    if exc.status == 401:
        headers = {**(headers or {}), "WWW-Authenticate": "Bearer"}
    body = problem_of(exc)
    return problem(
        request, exc.status, exc.title, exc.detail, errors=body.get("errors"), headers=headers
    )


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers) if exc.headers else None
    return problem(request, exc.status_code, str(exc.detail), str(exc.detail), headers=headers)


async def _embedding_error(request: Request, exc: Exception) -> JSONResponse:
    # The provider's own text stays in the log: it may carry keys or internal hosts.
    logger.warning("embedding provider failed: %s", exc)
    return problem(
        request,
        503,
        "Service Unavailable",
        "embedding provider unavailable; nothing was stored",
        headers={"Retry-After": "5"},
    )


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    if is_connection_error(exc):
        logger.warning("database unavailable: %s", type(exc).__name__)
        return problem(
            request,
            503,
            "Service Unavailable",
            "database unavailable",
            headers={"Retry-After": "2"},
        )
    logger.exception("unhandled error on %s", request.url.path)
    return problem(request, 500, "Internal Server Error", "internal error; see server logs")


_PROBLEM_STATUSES = {
    400: "The body could not be parsed",
    401: "No valid API key",
    403: "The key's role may not do this",
    404: "No such memory, session or key (in this tenant)",
    409: "Conflicting state (already superseded, ended, or in progress)",
    412: "If-Match does not match the current version",
    413: "Too large (batch size)",
    422: "Invalid input; `errors` names the fields",
    429: "Rate limit reached; see Retry-After",
    503: "Database unavailable; see Retry-After",
}

# Every route may answer these, always as problem details.
PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {
        "description": description,
        "content": {
            PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}},
        },
    }
    for status, description in _PROBLEM_STATUSES.items()
}


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(AppError, app_error_response)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(EmbeddingError, _embedding_error)
    app.add_exception_handler(Exception, _unexpected)
