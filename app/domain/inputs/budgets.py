"""How much an answer may hold: a snapshot's size in characters or tokens, a result's
format and token budget."""

from __future__ import annotations

from app.domain.errors import InvalidInputError
from app.domain.text import CHARS_PER_TOKEN
from app.domain.validation import number_in, one_of

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
