"""Near-duplicates and likely contradictions at write time: a new memory that nearly repeats
a live one of the same repository reinforces it instead of adding a second; one that looks
like it says the opposite is stored, and the answer names the memory it may supersede (the
service never supersedes on its own). "Nearly" is both a vector (cosine) and a lexical
(word-set overlap) likeness, thresholds chosen on LoCoMo's turns (bench/near_duplicates.py,
docs/benchmarks.md): different turns must stay different."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

import numpy as np

MERGE_SIMILARITY = 0.90
MERGE_OVERLAP = 0.7
# As close in meaning, but with another count of negations or other numbers, or the same frame
# with other words in it ("deploys go out on Tuesdays" / "... on Fridays"): may contradict.
# A merge also needs no such swap of words.
CONTRADICTION_SIMILARITY = 0.85
SAME_FRAME_OVERLAP = 0.5
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


def negations(text: str) -> int:
    return sum(word in NEGATIONS for word in WORD.findall(text.lower()))


def opposed(a: str, b: str) -> bool:
    """Another count of negations ("it is fun, isn't it" / "it is not fun, isn't it"), or
    other numbers, or the same in another order ("writer 2, memory 1" / "writer 1, memory
    2"): the same words may say otherwise."""
    return negations(a) != negations(b) or NUMBER.findall(a) != NUMBER.findall(b)


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
        if opposed(content, near.content):
            return Verdict(may_supersede=near.id)
        shared = overlap(content, near.content)
        if near.memory_type != memory_type:
            continue
        if (
            near.similarity >= MERGE_SIMILARITY
            and shared >= MERGE_OVERLAP
            and not swapped(content, near.content)
        ):
            return Verdict(merge_into=near.id)
        if shared >= SAME_FRAME_OVERLAP:
            return Verdict(may_supersede=near.id)
    return Verdict()
