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


# What to send, for a required field a newcomer leaves out.
REQUIRED_HINTS = {
    "source_repo": 'the repository as "owner/name", or null for a memory every repository'
    " sees (the CLI and the hooks send the git repository they run in)",
    "content": "the memory itself, as text",
    "text": "the learning itself, as text",
    "q": "what to look for, as text",
}


def invalid_input_problem(errors: Sequence[Any], body: Any = None) -> dict[str, Any]:
    """A parse failure (pydantic's errors) as one 422 naming every field, each message
    saying what to send. `body`: the request's text, where a JSON syntax error is placed."""
    listed = [
        {"field": _field_of(tuple(e["loc"]), e), "message": _message(e, body)} for e in errors
    ]
    fields = ", ".join(dict.fromkeys(e["field"] for e in listed))
    return {
        "title": "Unprocessable Content",
        "status": 422,
        "detail": f"invalid input: {fields}",
        "errors": listed,
    }


def _message(error: Any, body: Any) -> str:
    kind, loc = error.get("type"), tuple(error["loc"])
    if kind == "json_invalid":
        reason = (error.get("ctx") or {}).get("error") or "not JSON"
        where = _line_and_column(body, loc[-1]) if isinstance(loc[-1], int) else ""
        return f"the body is not valid JSON: {reason}{where}"
    if kind in ("model_attributes_type", "dict_type") and loc == ("body",):
        return (
            "the body must be a JSON object, sent with Content-Type: application/json"
            f" (got {type(error.get('input')).__name__})"
        )
    if kind == "missing" and (hint := REQUIRED_HINTS.get(str(loc[-1]))):
        return f"{loc[-1]} is required: {hint}"
    return str(error["msg"])


def _line_and_column(body: Any, offset: int) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if not isinstance(text, str):
        return f" at character {offset + 1}"
    before = text[:offset]
    return f" at line {before.count(chr(10)) + 1}, column {offset - before.rfind(chr(10))}"


def _field_of(loc: tuple[Any, ...], error: Any = None) -> str:
    if error is not None and error.get("type") == "json_invalid":
        return "body"  # its loc's last part is a character offset, not a field
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"
