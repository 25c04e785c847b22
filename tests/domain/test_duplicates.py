"""The write-time rule for near-duplicates and likely contradictions, at its thresholds."""

from __future__ import annotations

from uuid import UUID

import pytest

from app.domain.duplicates import (
    CONTRADICTION_SIMILARITY,
    MERGE_OVERLAP,
    MERGE_SIMILARITY,
    Neighbour,
    Verdict,
    judge,
    opposed,
    overlap,
)

OLD = UUID(int=1)
RULE = "Always pin the Postgres major version in CI images"


def near(content: str, similarity: float, memory_type: str = "decision") -> list[Neighbour]:
    return [Neighbour(OLD, content, memory_type, similarity)]


def test_a_restatement_at_the_thresholds_merges_and_just_below_does_not() -> None:
    restated = "always pin the postgres major version in ci images."
    assert overlap(RULE, restated) >= MERGE_OVERLAP
    assert judge(restated, "decision", near(RULE, MERGE_SIMILARITY)) == Verdict(merge_into=OLD)
    below = judge(restated, "decision", near(RULE, MERGE_SIMILARITY - 0.001))
    assert below.merge_into is None
    # Another type is another memory, however alike.
    assert judge(restated, "learning", near(RULE, 0.99)).merge_into is None


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("The vendor API rate limit is 200 rps", "The vendor API rate limit is 100 rps"),
        ("Do not run migrations at app start-up", "Run migrations at app start-up"),
        ("It is not fun, isn't it", "It is fun, isn't it"),  # a count, not a presence
    ],
)
def test_other_numbers_or_negations_are_named_never_merged(new: str, old: str) -> None:
    assert opposed(new, old)
    assert judge(new, "decision", near(old, 0.99)) == Verdict(may_supersede=OLD)
    assert judge(new, "decision", near(old, CONTRADICTION_SIMILARITY - 0.001)) == Verdict()


def test_the_same_frame_with_other_words_is_named() -> None:
    new, old = (
        "Deploys go out on Fridays after the standup",
        "Deploys go out on Tuesdays after the standup",
    )
    assert judge(new, "decision", near(old, 0.9)) == Verdict(may_supersede=OLD)


def test_a_memory_with_nothing_close_is_just_stored() -> None:
    assert (
        judge("Use ruff for formatting", "decision", near("Use ruff for linting", 0.7)) == Verdict()
    )
    assert judge("anything", "decision", []) == Verdict()
