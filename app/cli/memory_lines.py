"""A memory as the commands print it: one line (its id, type, repository, the start of
its text), the mark of a held or unreviewed one, and its JSON with `held` and `unreviewed`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from app.domain.memory import Memory
from app.domain.provenance import reasons_of, sources_of, unreviewed
from app.domain.text import cut, one_line


@dataclass(frozen=True, slots=True)
class Shown:
    """What provenance.unreviewed() reads of a memory (its held_at and provenance), from a
    memory as the server answers it: the rule is the domain's, applied once."""

    held_at: str | None
    provenance: dict[str, Any] | None

    @property
    def held(self) -> bool:
        return self.held_at is not None


def review_of(memory: dict[str, Any]) -> tuple[bool, bool]:
    """(held, unreviewed): held for a person's review, or written after untrusted input and
    not approved (app/domain/provenance.py unreviewed(); a held one is both)."""
    shown = Shown(memory.get("held_at"), memory.get("provenance"))
    return shown.held, unreviewed(cast(Memory, shown))


SOURCE_SHOWN_CHARS = 60


def review_mark(memory: dict[str, Any]) -> str:
    """A held or unreviewed memory's mark, `[held: read "https://..." +1]` (the first source
    its session read, quoted: a page's address is data, never this listing's structure), or
    the reason it is held (`[held: tells an agent to run downloaded code]`); "" for any
    other."""
    held, unchecked = review_of(memory)
    if not unchecked:
        return ""
    state = "held" if held else "unreviewed"
    sources = sources_of(memory.get("provenance"))
    if sources:
        first = json.dumps(cut(sources[0], SOURCE_SHOWN_CHARS), ensure_ascii=False)
        more = f" +{len(sources) - 1}" if len(sources) > 1 else ""
        return f"[{state}: read {first}{more}]"
    reasons = reasons_of(memory.get("provenance"))
    return f"[{state}: {reasons[0]}]" if reasons else f"[{state}]"


def with_review(memory: dict[str, Any]) -> dict[str, Any]:
    """A memory as --json prints it: the server's fields, and `held` and `unreviewed`."""
    held, unchecked = review_of(memory)
    return {**memory, "held": held, "unreviewed": unchecked}


def print_memory_line(memory: dict[str, Any], score: float | None = None) -> None:
    """One memory on one line: its id, type, where it is filed (its repository, or
    `global`), the start of its text, and its review mark when it is held or unreviewed."""
    lead = f"{score:5.3f}  " if score is not None else ""
    kind = memory["memory_type"][:14]
    where = cut(memory.get("source_repo") or "global", 24)
    text = cut(one_line(memory["content"]), 70)
    mark = review_mark(memory)
    print(f"{lead}{memory['id']}  {kind:14}  {where:24}  {text}{f'  {mark}' if mark else ''}")
