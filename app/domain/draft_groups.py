"""Near-duplicates in the review queue: drafts of one repository and kind that say nearly the
same thing (one lesson met in several sessions, each drafted in its own words), shown
together so that a person keeps the first and drops the rest in one click.

Two drafts are near when their texts share at least NEAR_OVERLAP of their content words
(Jaccard overlap of word sets: lower case, without the stop words of app/domain/duplicates.py,
without the words the drafting rules write around every finding, DRAFTING_WORDS, and
without one-character words), unless they are the same statement saying another value
(duplicates.contradicts(): "Always run ruff before committing" / "Always run mypy before
committing" are two rules). The threshold leans to grouping: a group is only shown
together, each draft still kept or dropped on its own, so a pair grouped wrongly costs a
glance, a pair missed a second read. tests/domain/test_draft_groups.py holds the examples
it was set on: restatements of one rule (0.55), the same fix with one more file (0.9),
two fixes of one repository (0.2), two rules (0.1).

A group is led by its first draft in the queue's order (newest first); a later draft joins
the first group whose leader it is near, else leads its own. Each draft it holds is near
the one that would be kept, which single linkage (near any member) would not promise.
Each draft's text is read once (its content words and its statement, Read), not once a
comparison: a page of MAX_QUEUE_PAGE drafts is compared with every group's leader.

Not duplicates.overlap(): that weighs every word of a write (stop words too, which a
restatement swaps) against the memories it may merge into, and two empty texts are the same
there; here only the words that say a lesson count, and a text of none is near nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from app.domain.duplicates import STOP_WORDS, WORD, Said, contradicts, said

NEAR_OVERLAP = 0.5
# The frame a fix draft is written in ("`make test` failed with: ... It passed after
# changing a.py"), the same in every fix: shared by all, it says nothing of the lesson.
DRAFTING_WORDS = frozenset(
    {"failed", "fails", "passed", "passes", "after", "changing", "changed", "now", "then"}
)


class Queued(Protocol):
    """What grouping reads of a draft (app/domain/drafts.py DraftEntry)."""

    @property
    def source_repo(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...


D = TypeVar("D", bound=Queued)


def content_words(text: str) -> frozenset[str]:
    """The words of a draft that say its lesson."""
    words = WORD.findall(text.lower())
    return frozenset(w for w in words if len(w) > 1) - STOP_WORDS - DRAFTING_WORDS


@dataclass(frozen=True, slots=True)
class Read:
    """A draft's text as grouping weighs it, read once."""

    words: frozenset[str]  # content_words
    said: Said  # for duplicates.contradicts


def read(text: str) -> Read:
    return Read(content_words(text), said(text))


def overlap_of(left: frozenset[str], right: frozenset[str]) -> float:
    """Jaccard overlap of two sets of content words (0 when either has none)."""
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' content words (0 when either has none)."""
    return overlap_of(content_words(a), content_words(b))


def near_read(a: Read, b: Read) -> bool:
    return overlap_of(a.words, b.words) >= NEAR_OVERLAP and not contradicts(a.said, b.said)


def near(a: str, b: str) -> bool:
    """Two texts that say nearly the same thing (of one repository and kind)."""
    return near_read(read(a), read(b))


def near_groups(drafts: Sequence[D]) -> list[list[D]]:
    """The drafts in groups, in the queue's order: each group led by its first draft (the
    one "keep the first" keeps), the others near it; a draft near none is a group alone.
    Each draft's text is read once; a group keeps its leader's reading."""
    groups: list[tuple[Read, list[D]]] = []
    for draft in drafts:
        mine = read(draft.text)
        home = next(
            (
                members
                for leader, members in groups
                if (members[0].source_repo, members[0].kind) == (draft.source_repo, draft.kind)
                and near_read(leader, mine)
            ),
            None,
        )
        if home is None:
            groups.append((mine, [draft]))
        else:
            home.append(draft)
    return [members for _, members in groups]
