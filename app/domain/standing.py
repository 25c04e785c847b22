"""A repository's standing memories, as `agent-memory render` writes them into a file that
an agent without hooks reads (AGENTS.md, .github/copilot-instructions.md, a Cursor rule).

Standing: the pinned memories, the decisions, the conventions (memories of the
`conventions` category: a convention draft kept) and the patterns and anti-patterns a
person or an agent wrote as rules. Only the repository's own, and never a personal one or
one held for review: the file is the team's, and often committed. In order, within a
budget of characters: the guardrails first (pinned by a person or the operator; never
left out, as in the snapshot), then the others alternately the newest and the most read
not yet taken, so that neither a new decision nor a rule read every day waits behind the
other. What the budget leaves out is counted.

Rendered by the snapshot's rules (app/domain/snapshot.py, app/domain/agent_text.py):
every stored text a quoted literal, so that no memory's text can open a heading, start a
line or speak as an instruction of the file's; the rest is this module's fixed text. The
same memories render the same text, so that a check in CI says whether it changed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.agent_text import quoted, type_label
from app.domain.drafts import KEPT_CATEGORY
from app.domain.errors import InvalidInputError
from app.domain.snapshot import REASONING_CHARS, STRUCTURE_NOTE, guardrail_text, stale_note
from app.domain.snapshot import trust_of as trust_label
from app.domain.text import cut

STANDING_TYPES = ("decision", "pattern", "anti_pattern")
STANDING_CATEGORIES = (KEPT_CATEGORY["convention"], "anti-patterns")
# Each order's first (the newest, the most read) read at most: a request's cost.
CANDIDATES = 200
DEFAULT_CHARS = 6_000
MIN_CHARS, MAX_CHARS = 500, 50_000

SECTION_TITLES = {
    "guardrails": "Guardrails (always apply)",
    "decisions": "Decisions",
    "conventions": "Conventions and patterns",
    "anti_patterns": "Anti-patterns (do not)",
}


@dataclass(frozen=True, slots=True)
class Standing:
    source_repo: str
    markdown: str  # the section's lines, each ending in "\n"
    memory_ids: list[str]  # those it shows, in its order
    left_out: int  # standing memories the budget left out


def standing_budget(max_chars: int | None) -> int:
    if max_chars is None:
        return DEFAULT_CHARS
    if not MIN_CHARS <= max_chars <= MAX_CHARS:
        raise InvalidInputError(f"max_chars must be {MIN_CHARS} to {MAX_CHARS}", field="max_chars")
    return max_chars


def is_guardrail(memory: Mapping[str, Any]) -> bool:
    """The snapshot's rule: pinned by a person or the operator (an agent's own pin keeps
    its memory from fading, nothing more), and not a decision."""
    return bool(
        memory.get("pinned")
        and memory.get("trust_level") != "agent"
        and memory.get("memory_type") != "decision"
    )


def section_of(memory: Mapping[str, Any]) -> str:
    if is_guardrail(memory):
        return "guardrails"
    if memory.get("memory_type") == "decision":
        return "decisions"
    if memory.get("memory_type") == "anti_pattern" or memory.get("category") == "anti-patterns":
        return "anti_patterns"
    return "conventions"


def line_of(memory: Mapping[str, Any]) -> str:
    """A memory's line, as the snapshot writes one of its kind."""
    section = section_of(memory)
    content = quoted(str(memory["content"]))
    trust = trust_label(memory)
    if section == "guardrails":
        return f"- {guardrail_text(memory)}"
    if section == "decisions":
        reasoning = (memory.get("metadata") or {}).get("reasoning")
        why = f" (why: {quoted(cut(str(reasoning), REASONING_CHARS))})" if reasoning else ""
        text = f"- [{trust}] {content}{why}"
    elif section == "conventions":
        kind = (
            quoted(str(memory["category"]))
            if memory.get("category")
            else type_label(memory.get("memory_type"))
        )
        text = f"- [{trust}] {kind}: {content}"
    else:
        text = f"- [{trust}] {content}"
    return text + stale_note(memory)


def ranked(memories: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Guardrails first (newest first), then the rest alternately the newest and the most
    read not yet taken; ties by id, so that the same memories give the same order."""

    def newest(m: Mapping[str, Any]) -> tuple[str, str]:
        return (str(m["created_at"]), str(m["id"]))

    guardrails = sorted((m for m in memories if is_guardrail(m)), key=newest, reverse=True)
    rest = [m for m in memories if not is_guardrail(m)]
    by_age = sorted(rest, key=newest, reverse=True)
    by_reads = sorted(
        rest, key=lambda m: (int(m.get("access_count") or 0), *newest(m)), reverse=True
    )
    order: dict[str, Mapping[str, Any]] = {str(m["id"]): m for m in guardrails}
    for pair in zip(by_age, by_reads, strict=True):
        for memory in pair:
            order.setdefault(str(memory["id"]), memory)
    return list(order.values())


def render(source_repo: str, memories: Sequence[Mapping[str, Any]], max_chars: int) -> Standing:
    """The section's text: the ranked memories that fit `max_chars` (guardrails always),
    under their sections' headings, and how many were left out."""
    head = [f"## Standing memory: {quoted(source_repo)}", "", STRUCTURE_NOTE]
    chosen: dict[str, list[tuple[str, str]]] = {section: [] for section in SECTION_TITLES}
    size = sum(len(line) + 1 for line in head)
    left_out = 0
    for memory in ranked(memories):
        section = section_of(memory)
        line = line_of(memory)
        grows = len(line) + 1 + (0 if chosen[section] else len(_title(section)) + 2)
        if section != "guardrails" and (left_out or size + grows > max_chars):
            left_out += 1
            continue
        chosen[section].append((str(memory["id"]), line))
        size += grows
    lines = head + list(_sections(chosen))
    if left_out:
        lines += ["", f"({left_out} more standing memories left out to fit {max_chars} characters)"]
    shown = [memory_id for section in chosen.values() for memory_id, _ in section]
    return Standing(source_repo, "".join(f"{line}\n" for line in lines), shown, left_out)


def _title(section: str) -> str:
    return f"### {SECTION_TITLES[section]}"


def _sections(chosen: Mapping[str, list[tuple[str, str]]]) -> Iterator[str]:
    for section, lines in chosen.items():
        if lines:
            yield ""
            yield _title(section)
            yield from (line for _, line in lines)
