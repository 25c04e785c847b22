"""The one way stored text enters what an agent reads: as a quoted literal.

Everything an agent is handed as text (the session snapshot, compact search results, the
strategy hint, the hooks' context) is structure written here plus data a writer supplied.
The two must not share a channel: a task, a summary or a memory's content that could start
a line, open a heading, close a fence or print a trust label would speak with an
operator's voice. So every piece of stored text is rendered by `quoted()`: a JSON string
literal, in which a quote, a backslash, every line break and every control or format
character is escaped. Outside the literals there is only the renderer's own text, and
`structure_of()` recovers it: a rendering's structure is what remains when every literal
is emptied, and no stored text can change it (tests/domain/test_agent_text.py holds that
for every field, with arbitrary text).

Labels that are not text a writer chose (a trust level, a memory type, a commit, a date)
are printed bare only when they are of their closed form; anything else is quoted.
"""

from __future__ import annotations

import re

from agent_memory_client.quoting import quoted
from app.domain.memory import KNOWN_MEMORY_TYPES, TRUST_ORDER

__all__ = ["quoted", "quoted_list", "structure_of"]

_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')
# A tag printed bare: letters, digits and a few joiners, nothing a label or a quote is made of.
_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+/-]{0,63}")
_COMMIT = re.compile(r"[0-9a-f]{7,64}")


def quoted_list(texts: list[str] | tuple[str, ...]) -> str:
    return ", ".join(quoted(text) for text in texts)


def structure_of(rendered: str) -> str:
    """The renderer's own text: `rendered` with every quoted literal emptied."""
    return _LITERAL.sub('""', rendered)


def trust_label(trust: object) -> str:
    """A trust level as a label: only one of the three levels ever prints as one."""
    return str(trust) if trust in TRUST_ORDER else "agent"


def type_label(value: object) -> str:
    """A memory type: bare when it is a built-in one, quoted otherwise (a writer may name
    any type, "system" included, and a bare one could pass for a trust level)."""
    text = str(value)
    return text if text in KNOWN_MEMORY_TYPES else quoted(text)


def tag_label(value: str) -> str:
    """A tag as `#name`, quoted when it holds anything but name characters."""
    return f"#{value}" if _TAG.fullmatch(value) else f"#{quoted(value)}"


def commit_label(value: object) -> str | None:
    """A commit as printed: its first 12 hex digits, or nothing when it is not a commit."""
    text = str(value or "")
    return text[:12] if _COMMIT.fullmatch(text) else None
