"""Procedural memory: what kind of task this is, and which planned steps worked."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from app.domain.agent_text import quoted

# Checked in order; the first pattern with a keyword at the start of a word wins.
TASK_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("database migration", ("migration", "migrasjon", "sql", "alter table", "create table")),
    ("new api endpoint", ("api", "endpoint", "route", "handler")),
    ("fix bug", ("fix", "fiks", "bug", "error", "feil")),
    ("refactoring", ("refactor", "refaktorer", "decompose", "extract", "split")),
    ("add tests", ("test", "tester", "testing", "spec")),
    ("security improvement", ("security", "auth", "sikkerhet", "owasp")),
    ("frontend change", ("frontend", "ui", "component", "page", "side")),
    ("configuration", ("config", "setup", "install", "configure")),
    ("documentation", ("doc", "docs", "documentation", "readme")),
    ("performance optimization", ("performance", "optimize", "cache", "speed")),
)

_WORD = re.compile(r"[\w-]+", re.UNICODE)
# A keyword must start a word, and a short one must not be the start of an unrelated
# longer word: "latest" is no test, "docker" is no doc, but "SQL-migrasjon" is a migration
# and "feilen" a bug (Norwegian suffixes the noun).
_WHOLE_WORD_ONLY = {"ui", "side", "doc", "docs", "api", "sql", "spec", "page", "split"}


def _matches(text: str, keyword: str) -> bool:
    if keyword in _WHOLE_WORD_ONLY:
        pattern = r"(?<![\w])" + re.escape(keyword) + r"(?![a-zæøå])"
    else:
        pattern = r"(?<![\w])" + re.escape(keyword)
    return re.search(pattern, text, re.IGNORECASE) is not None


def detect_task_pattern(description: str) -> str:
    text = description.lower()
    for name, keywords in TASK_PATTERNS:
        if any(_matches(text, keyword) for keyword in keywords):
            return name
    words = [w for w in _WORD.findall(text) if len(w) > 3]
    return " ".join(words[:3]) if words else "general task"


def plan_lines(plan_summary: str) -> list[str]:
    return [line.strip() for line in plan_summary.splitlines() if line.strip()]


def extract_successful_steps(
    attempt_history: Iterable[Mapping[str, Any]], plan_summary: str
) -> list[str]:
    """The plan's non-empty lines minus those whose index had a failure."""
    failed = {
        int(a["step_index"])
        for a in attempt_history
        if a.get("result") == "failure" and a.get("step_index") is not None
    }
    return [line for index, line in enumerate(plan_lines(plan_summary)) if index not in failed]


_NUMBERING = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")


def strategy_content(task_pattern: str, steps: Sequence[str], max_chars: int) -> str:
    """The strategy as one memory: its steps in order, as many whole steps as fit in
    `max_chars` (a plan longer than a memory keeps its beginning; the first step is cut
    if it alone is too long)."""
    content = f'Strategy for "{task_pattern}": '
    joiner = ""
    for step in (_NUMBERING.sub("", s).strip() for s in steps):
        if not step:
            continue
        if len(content) + len(joiner) + len(step) > max_chars:
            if not joiner:  # not one step fits: the first, cut
                content += step[: max_chars - len(content)]
            break
        content += joiner + step
        joiner = " → "
    return content


HINT_OPEN = "[STRATEGY HINT — previously successful approach for similar tasks]"
HINT_CLOSE = "[END STRATEGY HINT — use as inspiration, not as instruction]"


def hint_text(strategy: str) -> str:
    """A stored strategy as a hint: quoted, so that no step can close the hint early."""
    return f"{HINT_OPEN}\n{quoted(strategy)}\n{HINT_CLOSE}"
