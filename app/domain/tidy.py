"""Tidy proposals: what is untidy in a tenant's memory, for a person to accept or dismiss;
the service never applies one on its own.

- **merge**: live memories of one repository and type that say the same thing: each pair
  as near as the write path's merge asks (app/domain/duplicates.py's `judge`), joined into
  clusters. Accepting keeps the most used (the oldest on a tie) and supersedes the others
  by it.
- **replace**: a pair the write path would name as a possible contradiction (as near in
  meaning, with other negations or numbers, or the same frame with other words).
  Accepting supersedes the older by the newer; the proposal shows which is used more.
- **retire**: a memory marked possibly stale (a file it is about changed) at least
  RETIRE_AFTER_DAYS ago and not read since. Accepting archives it.
- **unwritten**: a memory a person kept from a rule of a file agents read (CLAUDE.md,
  AGENTS.md, ...: `agent-memory import-files`), whose rule was deleted from its file since.
  Accepting archives it.

A dismissed proposal does not come back while its memories stay as they were (its
`contents`, a digest of their versions: an edit or a stale mark moves one). Each kind's
precision is measured on labelled data (bench/tidy_precision.py, docs/history.md); a kind
wrong more than one time in ten is not listed unless asked for (SHOWN_BY_DEFAULT).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from app.domain.duplicates import Neighbour, judge

UNWRITTEN = "unwritten"
PROPOSAL_KINDS = ("merge", "replace", "retire", UNWRITTEN)
# Accepting one archives its memory (the others supersede).
ARCHIVING_KINDS = ("retire", UNWRITTEN)
# Made from a fact, not a guess (the rule is gone from its file): listed without a measure.
CERTAIN_KINDS = (UNWRITTEN,)
# Each kind's precision as measured (bench/tidy_precision.py, 2026-11-30; docs/history.md):
# merge and replace on LoCoMo's dev split and two scripted codebase histories, pooled; retire
# on encode/httpx's lessons checked one and two and a half years on, pooled. None: not measured.
MEASURED_PRECISION: dict[str, float | None] = {"merge": 0.88, "replace": 0.78, "retire": 0.35}
# Listed unless other kinds are asked for: those right nine times in ten or more.
SHOWN_BY_DEFAULT = (
    *(kind for kind, precision in MEASURED_PRECISION.items() if (precision or 0) >= 0.9),
    *CERTAIN_KINDS,
)
RETIRE_AFTER_DAYS = 14
MAX_CLUSTER = 10  # memories one merge proposal names at most
MAX_PROPOSALS_PAGE = 100


@dataclass(frozen=True, slots=True)
class Candidate:
    """A live memory as the proposals weigh it."""

    id: UUID
    content: str
    memory_type: str
    source_repo: str | None
    version: int  # any change to it (an edit, a stale mark) moves it
    created_at: datetime
    access_count: int


@dataclass(frozen=True, slots=True)
class NearPair:
    """Two live memories of one repository, and the cosine of their vectors."""

    first: Candidate
    second: Candidate
    similarity: float


@dataclass(frozen=True, slots=True)
class Proposal:
    kind: str
    memory_ids: tuple[UUID, ...]  # the one kept first (merge, replace), then those that go
    source_repo: str | None
    similarity: float | None
    reason: str
    contents: str  # a digest of the memories' versions: a dismissal holds while they hold

    @property
    def fingerprint(self) -> str:
        key = "\x1f".join([self.kind, *sorted(str(i) for i in self.memory_ids)])
        return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ProposalEntry:
    """A proposal as saved, for a person to decide."""

    id: UUID
    kind: str
    memory_ids: tuple[UUID, ...]
    source_repo: str | None
    similarity: float | None
    reason: str
    status: str
    created_at: datetime
    decided_at: datetime | None
    audit_id: UUID | None


def contents_of(memories: Iterable[Candidate]) -> str:
    versions = sorted(f"{m.id}:{m.version}" for m in memories)
    return hashlib.sha256("\x1f".join(versions).encode()).hexdigest()


def verdict_of(pair: NearPair) -> str | None:
    """ "merge", "replace" or None: the write path's rule on the pair, read both ways (the
    rule looks at a new memory against a stored one; here neither is new)."""
    kinds = set()
    for new, old in ((pair.first, pair.second), (pair.second, pair.first)):
        near = Neighbour(old.id, old.content, old.memory_type, pair.similarity)
        verdict = judge(new.content, new.memory_type, [near])
        if verdict.merge_into is not None:
            kinds.add("merge")
        elif verdict.may_supersede is not None:
            kinds.add("replace")
    if "replace" in kinds:  # read one way as the opposite: not the same thing
        return "replace"
    return "merge" if kinds else None


def kept_first(memories: Iterable[Candidate]) -> list[Candidate]:
    """The one a merge keeps first: the most used, then the oldest (the established one)."""
    return sorted(memories, key=lambda m: (-m.access_count, m.created_at, str(m.id)))


def each_pair_once(pairs: Sequence[NearPair]) -> list[NearPair]:
    """Each pair once, its lower id first, whichever side read it: a pair is near when
    either memory has the other among its nearest (a cluster of many restatements has more
    members than any one memory's nearest), so both reads of it come in."""
    seen: set[tuple[UUID, UUID]] = set()
    once: list[NearPair] = []
    for pair in pairs:
        first, second = sorted((pair.first, pair.second), key=lambda m: m.id)
        if (first.id, second.id) not in seen:
            seen.add((first.id, second.id))
            once.append(NearPair(first, second, pair.similarity))
    return once


def pair_proposals(pairs: Sequence[NearPair]) -> list[Proposal]:
    """Merge proposals, a cluster each (pairs that merge, joined), and replace proposals,
    a pair each: the newer kept first."""
    parent: dict[UUID, UUID] = {}
    members: dict[UUID, Candidate] = {}

    def root(memory_id: UUID) -> UUID:
        while parent[memory_id] != memory_id:
            parent[memory_id] = parent[parent[memory_id]]
            memory_id = parent[memory_id]
        return memory_id

    replaces: list[Proposal] = []
    merging: list[NearPair] = []
    for pair in pairs:
        kind = verdict_of(pair)
        if kind == "replace":
            newer, older = sorted(
                (pair.first, pair.second), key=lambda m: (m.created_at, str(m.id)), reverse=True
            )
            used = "the newer" if newer.access_count >= older.access_count else "the older"
            reason = (
                f"may say the opposite of an older memory: {used} is read more"
                f" ({newer.access_count} reads against {older.access_count})"
            )
            replaces.append(
                Proposal("replace", (newer.id, older.id), newer.source_repo, pair.similarity,
                         reason, contents_of((newer, older)))
            )  # fmt: skip
        elif kind == "merge":
            merging.append(pair)
            for memory in (pair.first, pair.second):
                members[memory.id] = memory
                parent.setdefault(memory.id, memory.id)
            parent[root(pair.second.id)] = root(pair.first.id)
    best: dict[UUID, float] = {}  # a cluster's nearest pair
    for pair in merging:
        key = root(pair.first.id)
        best[key] = max(best.get(key, 0.0), pair.similarity)
    clusters: dict[UUID, list[Candidate]] = {}
    for memory_id, memory in members.items():
        clusters.setdefault(root(memory_id), []).append(memory)
    merges = []
    for key, cluster in clusters.items():
        ordered = kept_first(cluster)[:MAX_CLUSTER]
        reason = (
            f"{len(ordered)} memories say the same thing: keep the most read, supersede the rest"
        )
        merges.append(
            Proposal("merge", tuple(m.id for m in ordered), ordered[0].source_repo,
                     best.get(key), reason, contents_of(ordered))
        )  # fmt: skip
    return merges + replaces


def retire_proposal(memory: Candidate, stale_reason: str | None) -> Proposal:
    why = f" ({stale_reason})" if stale_reason else ""
    reason = (
        f"possibly stale for {RETIRE_AFTER_DAYS} days or more{why}, and not read since: archive it"
    )
    return Proposal("retire", (memory.id,), memory.source_repo, None, reason, contents_of([memory]))


def unwritten_proposal(memory: Candidate, written_in: str) -> Proposal:
    """A memory kept from a file's rule that the file no longer holds. `written_in`: the
    file, as the draft named it (a person's text: quoted)."""
    reason = (
        f"its rule was deleted from {json.dumps(written_in, ensure_ascii=False)} since a"
        " person kept it: archive it"
    )
    return Proposal(
        UNWRITTEN, (memory.id,), memory.source_repo, None, reason, contents_of([memory])
    )
