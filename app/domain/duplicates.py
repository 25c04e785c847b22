"""Near-duplicates and likely contradictions at write time: a new memory that nearly repeats
a live one of the same repository reinforces it instead of adding a second; one that looks
like it says the opposite is stored, and the answer names the memory it may supersede (the
service never supersedes on its own). "Nearly" is both a vector (cosine) and a lexical
(word-set overlap) likeness, thresholds chosen on LoCoMo's turns (bench/near_duplicates.py,
docs/benchmarks.md): different turns must stay different. "The opposite" is the same
statement in the same words and order saying another value, shaped on hand-labelled pairs
and checked on a held-out set (bench/tidy_precision.py, docs/history.md)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from uuid import UUID

import numpy as np

MERGE_SIMILARITY = 0.90
MERGE_OVERLAP = 0.7
# As close in meaning and the same statement (SAME_STATEMENT of its words in the same order),
# with another count of negations or other numbers, or, after an opening both share, other
# words ("deploys go out on Tuesdays" / "... on Fridays"): may contradict. A merge also
# needs no such swap of words.
CONTRADICTION_SIMILARITY = 0.85
SAME_STATEMENT = 0.75
STATEMENT_WORDS = 200  # the words a statement is compared on: the alignment is quadratic
NEAREST = 3  # the live memories a new one is compared with

WORD = re.compile(r"[\w']+")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nothing", "without", "avoid", "cannot", "don't", "doesn't",
     "didn't", "isn't", "aren't", "wasn't", "won't", "can't", "shouldn't", "mustn't"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Neighbour:
    id: UUID
    content: str
    memory_type: str
    similarity: float  # cosine, of the stored vectors


@dataclass(frozen=True, slots=True)
class Verdict:
    merge_into: UUID | None = None
    may_supersede: UUID | None = None


# Words whose swap changes nothing a memory says ("in" for "should" in a restatement).
STOP_WORDS = frozenset(
    {"a", "an", "the", "in", "on", "at", "of", "for", "to", "and", "or", "is", "are", "be",
     "should", "must", "it", "this", "that", "with", "as", "by", "we", "you", "i"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Said:
    """A text as the rules below weigh it, read once (a write compares its text with up to
    NEAREST others, each by several rules)."""

    words: frozenset[str]  # every word, lower case
    statement: tuple[str, ...]  # the first STATEMENT_WORDS words, in order
    negations: int
    numbers: tuple[str, ...]


def said(text: str) -> Said:
    found = WORD.findall(text.lower())
    return Said(
        frozenset(found),
        tuple(found[:STATEMENT_WORDS]),
        sum(word in NEGATIONS for word in found),
        tuple(NUMBER.findall(text)),
    )


def overlap(a: Said, b: Said) -> float:
    """Jaccard overlap of the two texts' word sets."""
    union = a.words | b.words
    return len(a.words & b.words) / len(union) if union else 1.0


def swapped(a: Said, b: Said) -> bool:
    """Each side says a word the other does not ("Tuesdays" / "Fridays"): the same frame
    with other content, not a restatement (which adds or drops words, or reorders them)."""
    return bool(a.words - b.words - STOP_WORDS) and bool(b.words - a.words - STOP_WORDS)


def in_order(a: Said, b: Said) -> float:
    """How much of the two statements' words line up in the same order (2 x matched / all):
    a restatement reorders ("every Sunday night the database is reset" / "the database is
    reset every Sunday night"), another value keeps the frame."""
    return SequenceMatcher(None, a.statement, b.statement, autojunk=False).ratio()


def opens_alike(a: Said, b: Said) -> bool:
    """The first third of the shorter statement is word for word the same: the same subject
    ("deploys go out on ..."). "GET /items is cached ..." / "GET /users is cached ..." are
    two things, both true."""
    opening = max(1, -(-min(len(a.statement), len(b.statement)) // 3))
    return a.statement[:opening] == b.statement[:opening]


def exchanged(a: Said, b: Said) -> bool:
    """Two words in each other's place, the other words the two share in the same order
    ("run the migrations before the seed" / "run the seed before the migrations"): another
    statement, however alike, so never a merge."""
    in_a, in_b = Counter(a.statement), Counter(b.statement)
    once = {w for w in in_a if in_a[w] == 1 and in_b[w] == 1} - STOP_WORDS
    order_a = [w for w in a.statement if w in once]
    order_b = [w for w in b.statement if w in once]
    moved = [i for i, (x, y) in enumerate(zip(order_a, order_b, strict=True)) if x != y]
    return len(moved) == 2 and order_a[moved[0]] == order_b[moved[1]]


def opposed(a: Said, b: Said) -> bool:
    """Another count of negations ("it is fun, isn't it" / "it is not fun, isn't it"), or
    other numbers, or the same in another order ("writer 2, memory 1" / "writer 1, memory
    2"): the same words may say otherwise."""
    return a.negations != b.negations or a.numbers != b.numbers


def contradicts(a: Said, b: Said) -> bool:
    """The same statement saying otherwise: in the same order, with other negations or
    numbers anywhere, or, after the same opening, other words."""
    if in_order(a, b) < SAME_STATEMENT:
        return False
    return opposed(a, b) or (swapped(a, b) and opens_alike(a, b))


def unit(vector: Sequence[float]) -> np.ndarray:
    """The vector scaled to length 1 (zero stays zero), for cosines by dot product."""
    array = np.asarray(vector, dtype=np.float64)
    norm = np.linalg.norm(array)
    return array / norm if norm else array


@dataclass(frozen=True, slots=True)
class Written:
    """A memory of the batch being stored, written as a new row: its unit vector."""

    id: UUID
    content: str
    memory_type: str
    source_repo: str | None
    unit: np.ndarray


def nearest_with(
    stored: Sequence[Neighbour], unit_vector: np.ndarray, source_repo: str | None,
    written: Sequence[Written],
) -> list[Neighbour]:  # fmt: skip
    """The NEAREST of a new memory's stored neighbours (best first) and of what its batch
    wrote before it in the same repository, which the store's query could not see yet
    (cosine of the vectors as they are stored, as pgvector computes it)."""
    earlier = [w for w in written if w.source_repo == source_repo]
    if not earlier:
        return list(stored)
    cosines = np.stack([w.unit for w in earlier]) @ unit_vector
    seen = {near.id for near in stored}
    merged = list(stored) + [
        Neighbour(w.id, w.content, w.memory_type, float(cosine))
        for w, cosine in zip(earlier, cosines, strict=True)
        if w.id not in seen
    ]
    return sorted(merged, key=lambda near: -near.similarity)[:NEAREST]


def judge(content: str, memory_type: str, neighbours: Sequence[Neighbour]) -> Verdict:
    """What to do with a new memory given its nearest live ones (best first)."""
    new = said(content)
    for near in neighbours:
        if near.similarity < CONTRADICTION_SIMILARITY:
            break
        old = said(near.content)
        if contradicts(new, old):
            return Verdict(may_supersede=near.id)
        if (
            near.memory_type == memory_type
            and near.similarity >= MERGE_SIMILARITY
            and overlap(new, old) >= MERGE_OVERLAP
            and not swapped(new, old)
            and not opposed(new, old)
            and not exchanged(new, old)
        ):
            return Verdict(merge_into=near.id)
    return Verdict()
