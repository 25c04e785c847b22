"""A retry's context as an agent sends it (the task, the files before and after, the
validation output, a diagnosis) and its rule, each refusal naming the field as sent."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from app.domain.errors import InvalidInputError
from app.domain.validation import (
    FIELD_CHARS,
    LIST_ITEMS,
    bounded_list,
    clean_line,
    clean_optional_text,
    clean_text,
    forbid_unknown,
    number_in,
)

# Inclusive ranges of the numbers a retry request carries.
ATTEMPT_NUMBER = (1, 1_000_000)
FULL_CONTEXT_TOKENS = (0, 10**12)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FileState:
    path: str
    content: str = ""


@dataclass(frozen=True, slots=True)
class RetryRequest:
    task_description: str
    plan_summary: str = ""
    current_files: Sequence[FileState] = ()
    previous_files: Sequence[FileState] = ()
    validation_output: str = ""
    diagnosis: Mapping[str, Any] | None = None
    attempt_number: int = 1
    full_context_tokens: int | None = None


DIAGNOSIS_FIELDS = ("root_cause", "reason", "suggested_action")


def as_sent(field: str, rule: Callable[[], T]) -> T:
    """A rule's answer, its refusal naming the field as the client sent it (a rule's own
    name is its limit's: `file_content` is `current_files.3.content` in a request)."""
    try:
        return rule()
    except InvalidInputError as exc:
        detail = exc.detail.replace(exc.field, field, 1) if exc.field else exc.detail
        raise InvalidInputError(detail, field=field) from exc


def retry_request(request: RetryRequest) -> RetryRequest:
    def files(items: Sequence[FileState], name: str) -> list[FileState]:
        listed = as_sent(name, lambda: bounded_list(items, "files", LIST_ITEMS["files"]))
        cleaned = []
        for i, state in enumerate(listed):
            path: str | None = as_sent(f"{name}.{i}.path", partial(clean_line, state.path, "path"))
            content: str = as_sent(
                f"{name}.{i}.content",
                partial(clean_text, state.content, "file_content",
                        max_chars=FIELD_CHARS["file_content"]),
            )  # fmt: skip
            cleaned.append(FileState(path=path or "", content=content))
        return cleaned

    diagnosis = None
    if request.diagnosis is not None:
        forbid_unknown(request.diagnosis, DIAGNOSIS_FIELDS, "diagnosis")
        diagnosis = {
            key: as_sent(f"diagnosis.{key}", partial(clean_optional_text, value, "description"))
            for key, value in request.diagnosis.items()
        }
    if isinstance(request.attempt_number, bool) or not isinstance(request.attempt_number, int):
        raise InvalidInputError("attempt_number must be a whole number", field="attempt_number")
    number_in(request.attempt_number, "attempt_number", *ATTEMPT_NUMBER)
    if request.full_context_tokens is not None:
        number_in(request.full_context_tokens, "full_context_tokens", *FULL_CONTEXT_TOKENS)
    return RetryRequest(
        task_description=clean_text(
            request.task_description, "task_description", max_chars=FIELD_CHARS["retry_text"]
        ),
        plan_summary=clean_text(
            request.plan_summary, "plan_summary", max_chars=FIELD_CHARS["retry_text"]
        ),
        current_files=files(request.current_files, "current_files"),
        previous_files=files(request.previous_files, "previous_files"),
        validation_output=clean_text(request.validation_output, "validation_output"),
        diagnosis=diagnosis,
        attempt_number=request.attempt_number,
        full_context_tokens=request.full_context_tokens,
    )
