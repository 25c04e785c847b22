"""Small text rules shared by the domain."""

from __future__ import annotations


def cut(text: str, limit: int) -> str:
    """At most `limit` characters; a cut text ends in '...'."""
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


# The end of a published pattern (OpenAPI reads a pattern as a search): "$" alone also
# matches before a final newline in Python's re, so "a\n" would pass "^a$" there.
PATTERN_END = r"$(?!\n)"

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up: close enough for English and code, no tokenizer."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def one_line(text: str) -> str:
    """Runs of whitespace (newlines included) as single spaces."""
    return " ".join(text.split())
