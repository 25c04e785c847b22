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


def words(text: str) -> frozenset[str]:
    return frozenset(WORD.findall(text.lower()))


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' word sets."""
    left, right = words(a), words(b)
    return len(left & right) / len(left | right) if left or right else 1.0


# Words whose swap changes nothing a memory says ("in" for "should" in a restatement).
STOP_WORDS = frozenset(
    {"a", "an", "the", "in", "on", "at", "of", "for", "to", "and", "or", "is", "are", "be",
     "should", "must", "it", "this", "that", "with", "as", "by", "we", "you", "i"}
)  # fmt: skip


def swapped(a: str, b: str) -> bool:
    """Each side says a word the other does not ("Tuesdays" / "Fridays"): the same frame
    with other content, not a restatement (which adds or drops words, or reorders them)."""
    only_a, only_b = words(a) - words(b) - STOP_WORDS, words(b) - words(a) - STOP_WORDS
    return bool(only_a) and bool(only_b)


def words_of(text: str) -> list[str]:
    """The statement's first STATEMENT_WORDS words, in order, lower case."""
    return WORD.findall(text.lower())[:STATEMENT_WORDS]


def in_order(a: str, b: str) -> float:
    """How much of the two texts' words line up in the same order (2 x matched / all): a
    restatement reorders ("every Sunday night the database is reset" / "the database is
    reset every Sunday night"), another value keeps the frame."""
    return SequenceMatcher(None, words_of(a), words_of(b), autojunk=False).ratio()


def opens_alike(a: str, b: str) -> bool:
    """The first third of the shorter text is word for word the same: the same subject
    ("deploys go out on ..."). "GET /items is cached ..." / "GET /users is cached ..." are
    two things, both true."""
    left, right = words_of(a), words_of(b)
    opening = max(1, -(-min(len(left), len(right)) // 3))
    return left[:opening] == right[:opening]


def exchanged(a: str, b: str) -> bool:
    """Two words in each other's place, the other words the two share in the same order
    ("run the migrations before the seed" / "run the seed before the migrations"): another
    statement, however alike, so never a merge."""
    left, right = words_of(a), words_of(b)
    in_left, in_right = Counter(left), Counter(right)
    once = {w for w in in_left if in_left[w] == 1 and in_right[w] == 1} - STOP_WORDS
    order_a, order_b = [w for w in left if w in once], [w for w in right if w in once]
    moved = [i for i, (x, y) in enumerate(zip(order_a, order_b, strict=True)) if x != y]
    return len(moved) == 2 and order_a[moved[0]] == order_b[moved[1]]


def negations(text: str) -> int:
    return sum(word in NEGATIONS for word in WORD.findall(text.lower()))


def opposed(a: str, b: str) -> bool:
    """Another count of negations ("it is fun, isn't it" / "it is not fun, isn't it"), or
    other numbers, or the same in another order ("writer 2, memory 1" / "writer 1, memory
    2"): the same words may say otherwise."""
    return negations(a) != negations(b) or NUMBER.findall(a) != NUMBER.findall(b)


def contradicts(a: str, b: str) -> bool:
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
    for near in neighbours:
        if near.similarity < CONTRADICTION_SIMILARITY:
            break
        if contradicts(content, near.content):
            return Verdict(may_supersede=near.id)
        if (
            near.memory_type == memory_type
            and near.similarity >= MERGE_SIMILARITY
            and overlap(content, near.content) >= MERGE_OVERLAP
            and not swapped(content, near.content)
            and not opposed(content, near.content)
            and not exchanged(content, near.content)
        ):
            return Verdict(merge_into=near.id)
    return Verdict()
