"""Errors as RFC 9457 problem details: one rendering for every door (REST bodies, MCP tool
errors, the console's error page)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from app.domain.errors import AppError


class Problem(BaseModel):
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[dict[str, Any]] | None = None


def problem_of(error: AppError) -> dict[str, Any]:
    """RFC 9457 problem details for a typed error (REST adds `type` and `instance`)."""
    body: dict[str, Any] = {"title": error.title, "status": error.status, "detail": error.detail}
    if error.field:
        body["errors"] = [{"field": error.field, "message": error.detail}]
    return body


def invalid_input_problem(errors: Sequence[Any]) -> dict[str, Any]:
    """A parse failure (pydantic's errors) as one 422 naming every field."""
    listed = [{"field": _field_of(tuple(e["loc"])), "message": e["msg"]} for e in errors]
    fields = ", ".join(dict.fromkeys(e["field"] for e in listed))
    return {
        "title": "Unprocessable Content",
        "status": 422,
        "detail": f"invalid input: {fields}",
        "errors": listed,
    }


def _field_of(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"
