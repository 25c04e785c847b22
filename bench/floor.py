"""The relevance floor, replayed offline by the benchmarks (the statement applies it in SQL):
which ranked results are worth returning: a relevance floor relative to the best match
and an absolute one, so that two relevant memories come back as two, not padded to the
limit with rows that share a stop word with the query.

The search statement applies the same rule in SQL (app/repository/search.py, `ranked`),
so that nothing below the floor is counted as accessed; this is its reference, and what
the benchmarks replay offline to choose the floor."""

from __future__ import annotations

from collections.abc import Sequence


def above_floor(scores: Sequence[float], ratio: float, minimum: float) -> int:
    """How many of the leading (best-first) scores to keep: those at least `ratio` times
    the best score and at least `minimum`. The best is kept whenever it clears `minimum`."""
    if not scores:
        return 0
    bar = max(minimum, ratio * scores[0])
    kept = 0
    for score in scores:
        if score < bar:
            break
        kept += 1
    return kept
