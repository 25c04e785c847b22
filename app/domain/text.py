"""Small text rules shared by the domain."""

from __future__ import annotations


def cut(text: str, limit: int) -> str:
    """At most `limit` characters; a cut text ends in '...'."""
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up: close enough for English and code, no tokenizer."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def one_line(text: str) -> str:
    """Runs of whitespace (newlines included) as single spaces."""
    return " ".join(text.split())
