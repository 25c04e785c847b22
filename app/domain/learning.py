"""Manual learning capture: category from signal words, a short title."""

from __future__ import annotations

import re

MIN_LEARNING_CHARS = 20
TITLE_CHARS = 60

_ANTI_PATTERN = re.compile(
    r"\b(?:never|don['’]t|avoid|wrong|broken)\b|\bbug caused by\b", re.IGNORECASE
)
_PATTERN = re.compile(r"\b(?:always|prefer|use|should)\b|\bbest practice\b", re.IGNORECASE)

# The category a learning is filed under, and the memory type that goes with it.
CATEGORY_TYPES = {"anti-patterns": "anti_pattern", "patterns": "pattern", "heuristics": "heuristic"}


def infer_category(text: str) -> str:
    if _ANTI_PATTERN.search(text):
        return "anti-patterns"
    if _PATTERN.search(text):
        return "patterns"
    return "heuristics"


def make_title(text: str, limit: int = TITLE_CHARS) -> str:
    """The first line, at most `limit` characters (cut ones end in '...')."""
    first_line = " ".join(text.strip().splitlines()[0].split()) if text.strip() else ""
    if len(first_line) <= limit:
        return first_line
    return first_line[: limit - 3].rstrip() + "..."
