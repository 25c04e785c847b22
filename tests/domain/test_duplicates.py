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
    contradicts,
    exchanged,
    judge,
    opposed,
    overlap,
    said,
)

OLD = UUID(int=1)
RULE = "Always pin the Postgres major version in CI images"


def near(content: str, similarity: float, memory_type: str = "decision") -> list[Neighbour]:
    return [Neighbour(OLD, content, memory_type, similarity)]


def test_a_restatement_at_the_thresholds_merges_and_just_below_does_not() -> None:
    restated = "always pin the postgres major version in ci images."
    assert overlap(said(RULE), said(restated)) >= MERGE_OVERLAP
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
    assert opposed(said(new), said(old))
    assert judge(new, "decision", near(old, 0.99)) == Verdict(may_supersede=OLD)
    assert judge(new, "decision", near(old, CONTRADICTION_SIMILARITY - 0.001)) == Verdict()


def test_the_same_frame_with_other_words_is_named() -> None:
    new, old = (
        "Deploys go out on Fridays after the standup",
        "Deploys go out on Tuesdays after the standup",
    )
    assert judge(new, "decision", near(old, 0.9)) == Verdict(may_supersede=OLD)


@pytest.mark.parametrize(
    ("new", "old"),
    [
        # A restatement reorders: not the same statement saying otherwise.
        (
            "Feature flags are read once at start-up from config/flags.yaml",
            "Feature flags live in config/flags.yaml and are read once at start-up",
        ),
        (
            "Never use print(); log through the structured logger",
            "Log with the structured logger, never print()",
        ),
        # The same frame about another subject: two things, both true.
        ("GET /users is cached for 60 seconds", "GET /items is cached for 60 seconds"),
    ],
)
def test_a_restatement_or_a_neighbour_is_not_named(new: str, old: str) -> None:
    assert not contradicts(said(new), said(old))
    assert judge(new, "learning", near(old, 0.97, "learning")).may_supersede is None


def test_a_negation_added_anywhere_is_named() -> None:
    new, old = "Deploys are no longer frozen on Fridays", "Deploys are frozen on Fridays"
    assert contradicts(said(new), said(old))
    assert judge(new, "decision", near(old, 0.97)) == Verdict(may_supersede=OLD)


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("Run the seed before the migrations", "Run the migrations before the seed"),
        ("The worker calls the API", "The API calls the worker"),
    ],
)
def test_two_words_exchanged_say_another_thing_and_never_merge(new: str, old: str) -> None:
    assert exchanged(said(new), said(old))
    assert overlap(said(new), said(old)) == 1.0
    assert judge(new, "decision", near(old, 0.99)).merge_into is None


def test_a_restatement_that_moves_a_phrase_is_no_exchange() -> None:
    new, old = (
        "Every Sunday night the staging database is reset",
        "The staging database is reset every Sunday night",
    )
    assert not exchanged(said(new), said(old))
    assert judge(new, "decision", near(old, 0.97)) == Verdict(merge_into=OLD)


def test_a_memory_with_nothing_close_is_just_stored() -> None:
    assert (
        judge("Use ruff for formatting", "decision", near("Use ruff for linting", 0.7)) == Verdict()
    )
    assert judge("anything", "decision", []) == Verdict()
