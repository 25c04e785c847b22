"""A search's result row: the memory and the parts of its score."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.memory import Memory


@dataclass(frozen=True, slots=True)
class SearchHit:
    memory: Memory
    score: float
    similarity: float
    vector_similarity: float
    keyword_score: float
    decayed_score: float
