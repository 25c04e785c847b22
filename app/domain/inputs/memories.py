"""A memory as a client writes it (MemoryRequest), the rule that makes it a NewMemory, one
or a batch; an edit in place; a repository named as a filter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from app.domain.errors import InvalidInputError, PayloadTooLargeError
from app.domain.fields import EDITABLE_FIELDS
from app.domain.memory import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MEMORY_TYPE,
    DEFAULT_SOURCE,
    DEFAULT_TRUST,
    TRUST_ORDER,
    Confidence,
    NewMemory,
)
from app.domain.validation import (
    Limits,
    clean_commit,
    clean_content,
    clean_context,
    clean_line,
    clean_memory_type,
    clean_metadata,
    clean_paths,
    clean_tags,
    forbid_unknown,
    one_of,
)

CONFIDENCES: tuple[str, ...] = get_args(Confidence)


@dataclass(frozen=True, slots=True)
class MemoryRequest:
    content: str
    memory_type: str = DEFAULT_MEMORY_TYPE
    category: str | None = None
    tags: Sequence[str] | None = None
    source_repo: str | None = None
    task_id: str | None = None
    trust_level: str = DEFAULT_TRUST
    confidence: str = DEFAULT_CONFIDENCE
    pinned: bool = False
    source: str = DEFAULT_SOURCE
    name: str | None = None
    metadata: Mapping[str, Any] | None = None
    context: str | None = None
    git_branch: str | None = None
    git_commit: str | None = None
    files: Sequence[str] | None = None
    personal: bool = False


def new_memory(request: MemoryRequest, limits: Limits) -> NewMemory:
    return NewMemory(
        content=clean_content(request.content, limits),
        memory_type=clean_memory_type(request.memory_type) or DEFAULT_MEMORY_TYPE,
        category=clean_line(request.category, "category"),
        tags=clean_tags(request.tags, limits),
        source_repo=clean_line(request.source_repo, "source_repo"),
        task_id=clean_line(request.task_id, "task_id"),
        trust_level=one_of(request.trust_level, "trust_level", TRUST_ORDER, DEFAULT_TRUST),  # type: ignore[arg-type]
        confidence=one_of(request.confidence, "confidence", CONFIDENCES, DEFAULT_CONFIDENCE),  # type: ignore[arg-type]
        pinned=bool(request.pinned),
        source=clean_line(request.source, "source") or DEFAULT_SOURCE,
        name=clean_line(request.name, "name"),
        metadata=clean_metadata(request.metadata, limits),
        context=clean_context(request.context, limits),
        git_branch=clean_line(request.git_branch, "git_branch"),
        git_commit=clean_commit(request.git_commit),
        files=clean_paths(request.files, "files"),
        personal=bool(request.personal),
    )


def new_memories(drafts: Sequence[MemoryRequest], limits: Limits) -> list[NewMemory]:
    """A batch: all or nothing, and the error names the item."""
    if len(drafts) > limits.max_batch:
        raise PayloadTooLargeError(
            f"a batch holds at most {limits.max_batch} memories, got {len(drafts)}",
            field="memories",
        )
    if not drafts:
        raise InvalidInputError("a batch holds at least one memory", field="memories")
    items = []
    for index, draft in enumerate(drafts):
        try:
            items.append(new_memory(draft, limits))
        except InvalidInputError as exc:
            raise InvalidInputError(exc.detail, field=f"memories.{index}.{exc.field}") from exc
    return items


def forbid_content_change(fields: Any) -> None:
    if isinstance(fields, Mapping) and "content" in fields:
        raise InvalidInputError(
            "content never changes in place: POST /memories/{id}/supersede with the new memory",
            field="content",
        )


def memory_edit(fields: Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """The fields of a PATCH, cleaned; content never changes in place."""
    forbid_content_change(fields)
    forbid_unknown(fields, EDITABLE_FIELDS, None)
    cleaned: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "tags":
            cleaned[name] = list(clean_tags(value, limits))
        elif name == "metadata":
            cleaned[name] = clean_metadata(value, limits)
        elif name == "category":
            cleaned[name] = clean_line(value, "category")
        elif value is None:
            continue  # pinned and confidence have no "unset"
        elif name == "confidence":
            cleaned[name] = one_of(value, "confidence", CONFIDENCES, DEFAULT_CONFIDENCE)
        elif name == "pinned":
            if not isinstance(value, bool):
                raise InvalidInputError("pinned must be true or false", field="pinned")
            cleaned[name] = value
    return cleaned


def source_repo_filter(value: str | None) -> str | None:
    return clean_line(value, "source_repo")
