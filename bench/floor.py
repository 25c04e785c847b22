"""The relevance floor, replayed offline by the benchmarks (the statement applies it in SQL):
which ranked results are worth returning. A floor relative to the best match, so that two
relevant memories come back as two, not padded to the limit with rows that share a stop
word with the query; and an absolute one on what a result matched of the query (its
similarity, before age), so that a query nothing answers comes back empty.

The search statement applies the same rule in SQL (app/repository/search_statement.py,
`ranked`), so that nothing below the floor is counted as accessed; this is its reference,
and what the benchmarks replay offline to choose the floor."""

from __future__ import annotations

from collections.abc import Sequence

# A ranked result as the floor reads it: (score, similarity).
Scored = tuple[float, float]


def kept(results: Sequence[Scored], ratio: float, minimum: float) -> list[int]:
    """The positions of the best-first results the floor keeps: each scoring at least
    `ratio` times the best score, with a similarity of at least `minimum`."""
    if not results:
        return []
    bar = ratio * results[0][0]
    return [
        i for i, (score, similarity) in enumerate(results) if score >= bar and similarity >= minimum
    ]
