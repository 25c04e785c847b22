"""What a client sends for each operation, as it arrives, and the rule that turns it into
a value the services may act on. Every door (REST, MCP, CLI) builds these from its own
parsing and hands them to a service, which validates them here: one rule per field."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar, get_args
from uuid import UUID

from app.domain.errors import InvalidInputError, PayloadTooLargeError
from app.domain.fields import EDITABLE_FIELDS
from app.domain.filters import FilterDraft, MemoryFilter, memory_filter
from app.domain.learning import TOO_SHORT, remembered_trust, too_short
from app.domain.memory import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MEMORY_TYPE,
    DEFAULT_SOURCE,
    DEFAULT_TRUST,
    TRUST_ORDER,
    Confidence,
    NewMemory,
    TrustLevel,
)
from app.domain.text import CHARS_PER_TOKEN, PATTERN_END
from app.domain.validation import (
    FIELD_CHARS,
    LIST_ITEMS,
    Limits,
    bounded_list,
    clean_commit,
    clean_content,
    clean_context,
    clean_line,
    clean_lines,
    clean_memory_type,
    clean_metadata,
    clean_optional_text,
    clean_paths,
    clean_tags,
    clean_text,
    forbid_unknown,
    number_in,
    one_of,
)

CONFIDENCES: tuple[str, ...] = get_args(Confidence)
ATTEMPT_RESULTS = ("success", "failure")
MAX_SEARCH_LIMIT = 100
ALPHA = (0.0, 1.0)  # keyword only .. vector only
# Inclusive ranges of the numbers a learning or retry request carries.
TOTAL_ATTEMPTS = (0, 1_000_000)
QUALITY_SCORE = (-1_000_000, 1_000_000)
ATTEMPT_NUMBER = (1, 1_000_000)
FULL_CONTEXT_TOKENS = (0, 10**12)
FEEDBACK_OUTCOMES = ("helpful", "unhelpful")


def feedback_outcome(outcome: str) -> str:
    return one_of(outcome, "outcome", FEEDBACK_OUTCOMES, "")


@dataclass(frozen=True, slots=True)
class MemoryDraft:
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


D = TypeVar("D")
T = TypeVar("T")


def from_mapping(cls: type[D], value: Any, field: str) -> D:
    """A nested object a door passed on as a plain mapping (MCP arguments), as `cls`:
    unknown keys refused like unknown fields, missing required ones named."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{field} must be an object", field=field)
    known = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    forbid_unknown(value, known, field)
    required = [
        f.name
        for f in fields(cls)  # type: ignore[arg-type]
        if f.default is MISSING and f.default_factory is MISSING
    ]
    missing = [name for name in required if name not in value]
    if missing:
        raise InvalidInputError(f"{field} needs {', '.join(missing)}", field=field)
    return cls(**value)


def new_memory(draft: MemoryDraft, limits: Limits) -> NewMemory:
    return NewMemory(
        content=clean_content(draft.content, limits),
        memory_type=clean_memory_type(draft.memory_type) or DEFAULT_MEMORY_TYPE,
        category=clean_line(draft.category, "category"),
        tags=clean_tags(draft.tags, limits),
        source_repo=clean_line(draft.source_repo, "source_repo"),
        task_id=clean_line(draft.task_id, "task_id"),
        trust_level=one_of(draft.trust_level, "trust_level", TRUST_ORDER, DEFAULT_TRUST),  # type: ignore[arg-type]
        confidence=one_of(draft.confidence, "confidence", CONFIDENCES, DEFAULT_CONFIDENCE),  # type: ignore[arg-type]
        pinned=bool(draft.pinned),
        source=clean_line(draft.source, "source") or DEFAULT_SOURCE,
        name=clean_line(draft.name, "name"),
        metadata=clean_metadata(draft.metadata, limits),
        context=clean_context(draft.context, limits),
        git_branch=clean_line(draft.git_branch, "git_branch"),
        git_commit=clean_commit(draft.git_commit),
        files=clean_paths(draft.files, "files"),
        personal=bool(draft.personal),
    )


def new_memories(drafts: Sequence[MemoryDraft], limits: Limits) -> list[NewMemory]:
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


@dataclass(frozen=True, slots=True)
class RememberDraft:
    text: str
    source_repo: str | None = None
    category: str | None = None
    name: str | None = None
    reasoning: str | None = None
    confidence: str | None = None
    references: Sequence[str] | None = None
    context: str | None = None
    git_branch: str | None = None  # where it was learned: staleness counts from this commit
    git_commit: str | None = None
    files: Sequence[str] | None = None  # the repository's files it is about
    # Whose it is (remembered_trust): an agent's, or a person's own note. A door offers it
    # only where a person may be the one writing (REST, the CLI); MCP's `remember` does not.
    trust_level: str = DEFAULT_TRUST
    personal: bool = False  # its person's alone (docs/team.md)


@dataclass(frozen=True, slots=True)
class Learning:
    text: str
    source_repo: str | None
    category: str | None
    name: str | None
    reasoning: str | None
    confidence: str
    references: list[str]
    context: str | None
    git_branch: str | None = None
    git_commit: str | None = None
    files: tuple[str, ...] = ()
    trust_level: TrustLevel = DEFAULT_TRUST
    personal: bool = False


def learning(draft: RememberDraft, limits: Limits) -> Learning:
    text = clean_text(draft.text, "text", max_chars=limits.max_content_chars)
    if too_short(text):
        raise InvalidInputError(TOO_SHORT, field="text")
    confidence = draft.confidence or "low"
    if confidence not in CONFIDENCES:
        raise InvalidInputError(
            f"invalid confidence '{str(confidence)[:20]}'. Must be one of: high, medium, low",
            field="confidence",
        )
    return Learning(
        text=text,
        source_repo=clean_line(draft.source_repo, "source_repo"),
        category=clean_line(draft.category, "category"),
        name=clean_line(draft.name, "name"),
        reasoning=clean_optional_text(draft.reasoning, "reasoning"),
        confidence=confidence,
        references=[r for r in clean_lines(draft.references, "references") if r],
        context=clean_context(draft.context, limits),
        git_branch=clean_line(draft.git_branch, "git_branch"),
        git_commit=clean_commit(draft.git_commit),
        files=clean_paths(draft.files, "files"),
        trust_level=remembered_trust(draft.trust_level),
        personal=bool(draft.personal),
    )


@dataclass(frozen=True, slots=True)
class Attempt:
    result: str
    step_index: int | None = None
    action: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class StrategyAttempt:
    task_description: str
    total_attempts: int
    quality_score: float
    plan_steps: Sequence[str] | None = None
    plan_summary: str | None = None
    attempt_history: Sequence[Attempt] = ()
    files_changed: Sequence[str] | None = None
    model: str | None = None
    source_repo: str | None = None
    task_id: str | None = None


def strategy_attempt(draft: StrategyAttempt) -> StrategyAttempt:
    task = clean_text(draft.task_description, "task_description")
    if not task:
        raise InvalidInputError("task_description must not be empty", field="task_description")
    if isinstance(draft.total_attempts, bool) or not isinstance(draft.total_attempts, int):
        raise InvalidInputError("total_attempts must be a whole number", field="total_attempts")
    number_in(draft.total_attempts, "total_attempts", *TOTAL_ATTEMPTS)
    number_in(draft.quality_score, "quality_score", *QUALITY_SCORE)
    history = []
    for attempt in bounded_list(draft.attempt_history, "attempt_history"):
        if attempt.step_index is not None and (
            isinstance(attempt.step_index, bool) or not isinstance(attempt.step_index, int)
        ):
            raise InvalidInputError("step_index must be a whole number", field="step_index")
        history.append(
            Attempt(
                result=one_of(attempt.result, "attempt_history.result", ATTEMPT_RESULTS, ""),
                step_index=attempt.step_index,
                action=clean_optional_text(attempt.action, "action"),
                error=clean_optional_text(attempt.error, "error"),
            )
        )
    return StrategyAttempt(
        task_description=task,
        total_attempts=draft.total_attempts,
        quality_score=float(draft.quality_score),
        plan_steps=[
            clean_text(s, "plan_steps") for s in bounded_list(draft.plan_steps, "plan_steps")
        ]
        if draft.plan_steps is not None
        else None,
        plan_summary=clean_optional_text(draft.plan_summary, "plan_summary"),
        attempt_history=history,
        files_changed=clean_lines(draft.files_changed, "files_changed"),
        model=clean_line(draft.model, "model"),
        source_repo=clean_line(draft.source_repo, "source_repo"),
        task_id=clean_line(draft.task_id, "task_id"),
    )


@dataclass(frozen=True, slots=True)
class SearchDraft:
    q: str
    filter: FilterDraft = field(default_factory=FilterDraft)
    limit: int = 10
    alpha: float | None = None
    track_access: bool = True
    # False: every match up to `limit`, however far below the best.
    floor: bool = True
    # The branch the agent works on: its memories rank a little higher, none is left out.
    git_branch: str | None = None


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A search's validated input: `text` is what is searched, `dropped_terms` how many
    distinct words past the limit were left out of it."""

    text: str
    filter: MemoryFilter
    limit: int
    alpha: float | None
    track_access: bool
    git_branch: str | None = None
    dropped_terms: int = 0
    floor: bool = True


_WORD = re.compile(r"\w+", re.UNICODE)


def bound_query_terms(text: str, max_terms: int) -> tuple[str, int]:
    """The text up to its `max_terms`-th distinct word, and how many distinct words were
    cut: the keyword side reads the index once per distinct term."""
    seen: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if word in seen:
            continue
        if len(seen) == max_terms:
            rest = {w.lower() for w in _WORD.findall(text[match.start() :])} - seen
            return text[: match.start()].rstrip(), len(rest)
        seen.add(word)
    return text, 0


def search_query(draft: SearchDraft, limits: Limits) -> SearchQuery:
    text = clean_text(draft.q, "q", max_chars=limits.max_query_chars)
    text, dropped = bound_query_terms(text, limits.max_query_terms)
    limit = draft.limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidInputError(f"limit must be 1 to {MAX_SEARCH_LIMIT}", field="limit")
    return SearchQuery(
        text=text,
        filter=memory_filter(draft.filter, limits),
        limit=limit,
        alpha=None if draft.alpha is None else number_in(draft.alpha, "alpha", *ALPHA),
        track_access=bool(draft.track_access),
        git_branch=clean_line(draft.git_branch, "git_branch"),
        dropped_terms=dropped,
        floor=bool(draft.floor),
    )


@dataclass(frozen=True, slots=True)
class FileState:
    path: str
    content: str = ""


@dataclass(frozen=True, slots=True)
class RetryDraft:
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


def retry_draft(draft: RetryDraft) -> RetryDraft:
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
    if draft.diagnosis is not None:
        forbid_unknown(draft.diagnosis, DIAGNOSIS_FIELDS, "diagnosis")
        diagnosis = {
            key: as_sent(f"diagnosis.{key}", partial(clean_optional_text, value, "description"))
            for key, value in draft.diagnosis.items()
        }
    if isinstance(draft.attempt_number, bool) or not isinstance(draft.attempt_number, int):
        raise InvalidInputError("attempt_number must be a whole number", field="attempt_number")
    number_in(draft.attempt_number, "attempt_number", *ATTEMPT_NUMBER)
    if draft.full_context_tokens is not None:
        number_in(draft.full_context_tokens, "full_context_tokens", *FULL_CONTEXT_TOKENS)
    return RetryDraft(
        task_description=clean_text(
            draft.task_description, "task_description", max_chars=FIELD_CHARS["retry_text"]
        ),
        plan_summary=clean_text(
            draft.plan_summary, "plan_summary", max_chars=FIELD_CHARS["retry_text"]
        ),
        current_files=files(draft.current_files, "current_files"),
        previous_files=files(draft.previous_files, "previous_files"),
        validation_output=clean_text(draft.validation_output, "validation_output"),
        diagnosis=diagnosis,
        attempt_number=draft.attempt_number,
        full_context_tokens=draft.full_context_tokens,
    )


STRATEGY_HINT_CANDIDATES = 2


def hint_query(task: str, source_repo: str, limits: Limits) -> SearchQuery:
    """A strategy hint's search: the task (cut like any query) among this repository's
    strategies. The task may be longer than a query: a hint never fails for its length."""
    task = clean_text(task, "task")
    repo = clean_line(source_repo, "source_repo")
    if not task or not repo:
        raise InvalidInputError("task and source_repo must not be empty", field="task")
    text, dropped = bound_query_terms(task[: limits.max_query_chars], limits.max_query_terms)
    return SearchQuery(
        text=text,
        # Handed over before planning, unasked: a strategy held for review is not.
        filter=MemoryFilter(source_repo=repo, memory_types=["strategy"], include_held=False),
        limit=STRATEGY_HINT_CANDIDATES,
        alpha=None,
        track_access=True,
        dropped_terms=dropped,
    )


def key_request(tenant_id: str, name: str, role: str, roles: Sequence[str]) -> tuple[str, str, str]:
    tenant = clean_line(tenant_id, "tenant", max_chars=FIELD_CHARS["tenant"])
    key_name = clean_line(name, "name", max_chars=FIELD_CHARS["key_name"])
    if not tenant or not key_name:
        raise InvalidInputError("tenant and name must not be empty", field="name")
    return tenant, key_name, one_of(role, "role", roles, "agent")


@dataclass(frozen=True, slots=True)
class ListDraft:
    filter: FilterDraft = field(default_factory=FilterDraft)
    limit: int = 50
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class ListQuery:
    filter: MemoryFilter
    limit: int
    after: tuple[datetime, UUID] | None


MAX_LIST_LIMIT = 200


# A page's position: the last row's creation time (microseconds since the epoch) and id;
# empty for the first page. Every string of this form is a position (a page after it,
# maybe empty), so the pattern is the whole rule.
CURSOR_PATTERN = r"^(?:([0-9]{1,17})\.([0-9a-f]{32}))?" + PATTERN_END
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def encode_cursor(created_at: datetime, memory_id: UUID) -> str:
    micros = (created_at - _EPOCH) // timedelta(microseconds=1)
    return f"{micros}.{memory_id.hex}"


def decode_cursor(cursor: str) -> tuple[datetime, UUID] | None:
    matched = re.fullmatch(CURSOR_PATTERN, cursor)
    if matched is None:
        raise InvalidInputError("cursor is not one this server issued", field="cursor")
    micros, memory_id = matched.groups()
    if micros is None:
        return None
    return _EPOCH + timedelta(microseconds=int(micros)), UUID(hex=memory_id)


def list_query(draft: ListDraft, limits: Limits) -> ListQuery:
    limit = draft.limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidInputError(f"limit must be 1 to {MAX_LIST_LIMIT}", field="limit")
    return ListQuery(
        filter=memory_filter(draft.filter, limits),
        limit=limit,
        after=None if draft.cursor is None else decode_cursor(draft.cursor),
    )


def source_repo_filter(value: str | None) -> str | None:
    return clean_line(value, "source_repo")


MIN_SNAPSHOT_CHARS = 100
MAX_SNAPSHOT_CHARS = 200_000


def snapshot_budget(max_chars: int | None, max_tokens: int | None) -> int | None:
    """The snapshot's size bound in characters: the tighter of the two, None for none."""
    bounds = []
    if max_chars is not None:
        if not MIN_SNAPSHOT_CHARS <= max_chars <= MAX_SNAPSHOT_CHARS:
            raise InvalidInputError(
                f"max_chars must be {MIN_SNAPSHOT_CHARS} to {MAX_SNAPSHOT_CHARS}", field="max_chars"
            )
        bounds.append(max_chars)
    if max_tokens is not None:
        bounds.append(CHARS_PER_TOKEN * token_budget(max_tokens))
    return min(bounds) if bounds else None


RESULT_FORMATS = ("compact", "full")
MIN_BUDGET_TOKENS = 50
MAX_BUDGET_TOKENS = 100_000


def presentation(result_format: str, max_tokens: int | None) -> tuple[str, int | None]:
    """How an agent wants its results: compact (the default for agents) or the full rows,
    within an optional token budget."""
    chosen = one_of(result_format, "format", RESULT_FORMATS, "compact")
    return chosen, None if max_tokens is None else token_budget(max_tokens)


def token_budget(max_tokens: int) -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise InvalidInputError("max_tokens must be a whole number", field="max_tokens")
    return int(number_in(max_tokens, "max_tokens", MIN_BUDGET_TOKENS, MAX_BUDGET_TOKENS))
