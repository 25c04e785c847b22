"""Results an agent can afford: each hit in a few fixed fields (id, type, trust, score, age,
tags, content, a cut context), packed best-first within a token budget.

Every character of a tool's answer is paid for in the agent's context window on every
call. A compact hit carries at most its quoted content plus COMPACT_OVERHEAD characters:
the tags and the context are cut to what fits. The content, tags and context are quoted
literals (app/domain/agent_text.py): a memory cannot print a rank, a score or a trust.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from app.domain.agent_text import quoted, tag_label, trust_label, type_label
from app.domain.memory import Memory
from app.domain.provenance import sources_of, unreviewed
from app.domain.search import SearchHit
from app.domain.text import cut, estimate_tokens, one_line

COMPACT_OVERHEAD = 100
MIN_CONTEXT_CHARS = 20
SOURCES_SHOWN, MAX_SOURCE_SHOWN = 3, 100  # of an unreviewed memory's sources, beyond that


def age(then: datetime, now: datetime) -> str:
    seconds = max(0.0, (now - then).total_seconds())
    for unit, size in (("y", 31_536_000), ("mo", 2_592_000), ("d", 86_400), ("h", 3_600)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds // 60)}m"


@dataclass(frozen=True, slots=True)
class CompactHit:
    id: str
    type: str
    score: float | None  # None: handed over for what it is about, not ranked by a query
    age: str
    tags: tuple[str, ...]
    content: str
    context: str | None
    trust: str = "agent"  # who stands behind it: agent, user or system
    # "global" (filed under no repository), "possibly stale" (its code changed since),
    # "held-for-review" and "unreviewed" (written after untrusted input: provenance.py).
    marks: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()  # the untrusted sources its session read, if any

    def cut_context(self, chars: int = COMPACT_OVERHEAD // 2) -> str | None:
        """The context, on one line, cut to `chars` (for the JSON form)."""
        return cut(one_line(self.context), chars) if self.context else None

    def line(self, rank: int) -> str:
        """The text form, within len(quoted(content)) + COMPACT_OVERHEAD characters."""
        marks = "".join(f" {mark}" for mark in self.marks)
        trust = trust_label(self.trust)
        score = "" if self.score is None else f"{self.score:.2f} "
        head = f"{rank}. [{score}{type_label(self.type)} {trust} {self.age}{marks}"
        content = quoted(self.content)
        tail = f"] {self.id}\n{content}"
        room = COMPACT_OVERHEAD - len(head) - len(tail) + len(content)
        tags = ""
        for tag in self.tags:
            shown = f" {tag_label(tag)}"
            if len(tags) + len(shown) > room - MIN_CONTEXT_CHARS // 2:
                break
            tags += shown
        room -= len(tags)
        context = ""
        label = "\n(context: "
        if self.context and room >= MIN_CONTEXT_CHARS:
            cut_context = quoted_within(one_line(self.context), room - len(label) - 1)
            context = f"{label}{cut_context})" if cut_context else ""
        return f"{head}{tags}{tail}{context}{self.sources_line()}"

    def sources_line(self) -> str:
        """Where an unreviewed memory's session read untrusted input: its first few
        sources, quoted (a writer's text, never structure)."""
        if not self.sources:
            return ""
        shown = ", ".join(quoted(cut(s, MAX_SOURCE_SHOWN)) for s in self.sources[:SOURCES_SHOWN])
        more = len(self.sources) - SOURCES_SHOWN
        return f"\n(read before it was written: {shown}{f' and {more} more' if more > 0 else ''})"


def quoted_within(text: str, chars: int) -> str | None:
    """`text` quoted in at most `chars` characters, cut (ending in "...") when it must be;
    None when not even a cut of it fits."""
    whole = quoted(text)
    if len(whole) <= chars:
        return whole
    room = chars - len('"..."')
    kept, used = [], 0
    for char in text:
        shown = len(quoted(char)) - 2
        if used + shown > room:
            break
        kept.append(char)
        used += shown
    cut_text = "".join(kept).rstrip()
    return quoted(cut_text + "...") if cut_text else None


@dataclass(frozen=True, slots=True)
class Packed:
    lines: list[str]
    left_out: int


def pack(hits: Sequence[CompactHit], max_tokens: int | None, always_first: bool = True) -> Packed:
    """Best first, as many as fit in `max_tokens` (all when None); the first even when it
    alone is over, unless not `always_first` (a recall nobody asked for stays within)."""
    lines: list[str] = []
    used = 0
    for rank, hit in enumerate(hits, start=1):
        line = hit.line(rank)
        cost = estimate_tokens(line) + 1
        if max_tokens is not None and (lines or not always_first) and used + cost > max_tokens:
            return Packed(lines, len(hits) - len(lines))
        lines.append(line)
        used += cost
    return Packed(lines, 0)


def marks_of(memory: Memory) -> tuple[str, ...]:
    """What an agent should know of a result beyond its text."""
    marks = []
    if memory.source_repo is None:
        marks.append("global")
    if memory.stale_since is not None:
        marks.append("possibly-stale")
    if memory.held:
        marks.append("held-for-review")
    elif unreviewed(memory):
        marks.append("unreviewed")
    return tuple(marks)


class SearchAnswer(Protocol):
    """What the compact form reads of a search's answer (app/services/search.py's)."""

    @property
    def hits(self) -> Sequence[SearchHit]: ...
    @property
    def below_floor(self) -> int: ...
    @property
    def note(self) -> str | None: ...
    @property
    def truncated(self) -> str | None: ...
    @property
    def degraded(self) -> str | None: ...


def compact_hits(response: SearchAnswer, now: datetime) -> list[CompactHit]:
    return [compact_memory(hit.memory, now, round(hit.score, 3)) for hit in response.hits]


def compact_memory(memory: Memory, now: datetime, score: float | None = None) -> CompactHit:
    return CompactHit(
        id=str(memory.id),
        type=memory.memory_type,
        score=score,
        age=age(memory.created_at, now),
        tags=tuple(memory.tags),
        content=memory.content,
        context=memory.context,
        trust=memory.trust_level,
        marks=marks_of(memory),
        sources=tuple(sources_of(memory.provenance)) if unreviewed(memory) else (),
    )


def render_compact_search(response: SearchAnswer, now: datetime, max_tokens: int | None) -> str:
    """The text an agent reads: one header line, then each hit in its compact form."""
    packed = pack(compact_hits(response, now), max_tokens)
    notes = [f"{len(packed.lines)} result(s)"]
    if packed.left_out:
        notes.append(f"{packed.left_out} more left out to fit max_tokens={max_tokens}")
    if response.below_floor:
        notes.append(f"{response.below_floor} weaker match(es) below the relevance floor")
    for extra in (response.note, response.truncated, response.degraded):
        if extra:
            notes.append(extra)
    return "\n".join(["; ".join(notes), *packed.lines])
