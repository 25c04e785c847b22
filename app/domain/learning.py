"""Manual learning capture: category from signal words, a short title."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from app.domain.memory import NewMemory, TrustLevel
from app.domain.validation import one_of

if TYPE_CHECKING:
    from app.domain.inputs.learning import Learning

# A learning is a rule someone can follow: an action, what it acts on, and what sets it
# apart ("Use pnpm, not npm": 4 words, 17 characters). Three words tell that from what the
# capture should refuse ("done", "fixed it", "ok thanks"); the 20 characters it used to ask
# for refused real rules ("Run make itest", "No tabs in YAML"): docs/input-rules.md.
MIN_LEARNING_WORDS = 3
# The rule as a lookahead from the text's start, which the OpenAPI document states too
# (app/api/schemas/learning.py). A word is a run of non-space characters: `\s` means the same in
# Python and in JSON Schema's ECMA regexes on every character the text rule lets through,
# where `\w` is ASCII-only in ECMA and would count "Ĩ1Ħ" as two words there.
LEARNING_WORDS = rf"(?=\s*(?:\S+\s+){{{MIN_LEARNING_WORDS - 1}}}\S)"
_ENOUGH_WORDS = re.compile(LEARNING_WORDS)
TOO_SHORT = (
    f"a learning is a rule someone can follow, in {MIN_LEARNING_WORDS} words or more"
    ' ("Use pnpm, not npm")'
)
TITLE_CHARS = 60

_ANTI_PATTERN = re.compile(
    r"\b(?:never|don['’]t|avoid|wrong|broken)\b|\bbug caused by\b", re.IGNORECASE
)
_PATTERN = re.compile(r"\b(?:always|prefer|use|should)\b|\bbest practice\b", re.IGNORECASE)

# The category a learning is filed under, and the memory type that goes with it.
CATEGORY_TYPES = {"anti-patterns": "anti_pattern", "patterns": "pattern", "heuristics": "heuristic"}


def too_short(text: str) -> bool:
    return _ENOUGH_WORDS.match(text) is None


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


def learned_memory(learned: Learning, *, source: str) -> NewMemory:
    """A learning as the memory it is stored as: its category and title inferred where it
    names none, its reasoning and references kept in the metadata."""
    category = learned.category or infer_category(learned.text)
    metadata: dict[str, Any] = {}
    if learned.reasoning:
        metadata["reasoning"] = learned.reasoning
    if learned.references:
        metadata["references"] = learned.references
    return NewMemory(
        content=learned.text,
        memory_type=CATEGORY_TYPES.get(category, "learning"),
        category=category,
        source_repo=learned.source_repo,
        confidence=learned.confidence,  # type: ignore[arg-type]
        trust_level=learned.trust_level,
        source=source,
        name=learned.name or make_title(learned.text),
        metadata=metadata,
        context=learned.context,
        git_branch=learned.git_branch,
        git_commit=learned.git_commit,
        files=learned.files,
        personal=learned.personal,
    )


REMEMBERED_TRUST: tuple[TrustLevel, ...] = ("agent", "user")  # an agent's, a person's own


def remembered_trust(value: str) -> TrustLevel:
    """Whose a `remember` is: an agent's, or a person's own note. The one rule of every door
    that offers it (`/remember`'s field); which the key may write is the service's check."""
    return one_of(value, "trust_level", REMEMBERED_TRUST, "agent")  # type: ignore[return-value]
