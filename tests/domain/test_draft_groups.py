"""Near-duplicates in the review queue (app/domain/draft_groups.py): the examples its
threshold was set on, and how a queue falls into groups."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.domain.draft_groups import NEAR_OVERLAP, near, near_groups, word_overlap

RULE = "Never edit the generated files; always use the make target instead."
RULE_AGAIN = "Don't edit generated files by hand, use the make target."
FIX = (
    "`npm test` failed with: Error: Cannot find module 'dotenv'. It passed after changing"
    " package.json."
)
FIX_AGAIN = FIX.removesuffix(".") + ", package-lock.json."
OTHER_FIX = (
    "`make lint` failed with: E501 line too long (120 > 100). It passed after changing"
    " app/routes.py."
)
IMPORT_FIX = (
    "`make test` failed with: ImportError: cannot import name 'helper'. It passed after"
    " changing app/helper.py."
)
CONVENTION = "Run the tests with `uv run pytest -q`, not bare pytest."
CONVENTION_AGAIN = "Tests run through `uv run pytest`."


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        (RULE, RULE_AGAIN, 0.55),  # one rule, in two users' words
        (FIX, FIX_AGAIN, 0.9),  # one fix, one more file changed
        (CONVENTION, CONVENTION_AGAIN, 0.57),
    ],
)
def test_one_lesson_in_other_words_is_near(a: str, b: str, overlap: float) -> None:
    assert word_overlap(a, b) == pytest.approx(overlap, abs=0.01)
    assert word_overlap(a, b) >= NEAR_OVERLAP and near(a, b) and near(b, a)


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        (IMPORT_FIX, OTHER_FIX, 0.17),  # two fixes of one repository: the frame is not the lesson
        (RULE, "Never push to main; open a pull request.", 0.08),
    ],
)
def test_two_lessons_are_not(a: str, b: str, overlap: float) -> None:
    assert word_overlap(a, b) == pytest.approx(overlap, abs=0.01)
    assert not near(a, b)


def test_the_same_rule_for_another_tool_is_another_rule() -> None:
    """Two thirds of their words are shared, but it is one statement with another value."""
    a, b = "Always run ruff before committing.", "Always run mypy before committing."
    assert word_overlap(a, b) > NEAR_OVERLAP
    assert not near(a, b)


def test_a_text_of_no_content_words_is_near_nothing() -> None:
    assert word_overlap("It passed.", "It passed.") == 0.0 and not near("It passed.", "It passed.")


@dataclass(frozen=True)
class Draft:
    name: str
    source_repo: str
    kind: str
    text: str


def test_a_queue_falls_into_groups_led_by_their_first() -> None:
    queue = [
        Draft("rule", "acme/api", "instruction", RULE),
        Draft("fix", "acme/api", "fix", FIX),
        Draft("rule in the web repository", "acme/web", "instruction", RULE_AGAIN),
        Draft("rule again", "acme/api", "instruction", RULE_AGAIN),
        Draft("the rule as a convention", "acme/api", "convention", RULE_AGAIN),
        Draft("other fix", "acme/api", "fix", OTHER_FIX),
        Draft("fix again", "acme/api", "fix", FIX_AGAIN),
    ]
    groups = [[d.name for d in group] for group in near_groups(queue)]
    assert groups == [
        ["rule", "rule again"],  # one repository and kind only
        ["fix", "fix again"],
        ["rule in the web repository"],
        ["the rule as a convention"],
        ["other fix"],
    ]


def test_a_draft_joins_only_a_group_whose_first_it_is_near() -> None:
    """B is near A and C near B, but C is not near A: C leads a group of its own, so that
    "keep the first, drop the rest" never drops what the kept one does not say."""
    a = "Seed the database with make seed after the migrations."
    b = "After the migrations, run make seed to seed the local database."
    c = "Run make seed to fill the local database for the dev server."
    assert near(a, b) and near(b, c) and not near(a, c)
    groups = near_groups([Draft(t, "acme/api", "convention", t) for t in (a, b, c)])
    assert [[d.text for d in g] for g in groups] == [[a, b], [c]]
