"""The memory value type and its vocabularies."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from app.domain.errors import ConflictError
from app.domain.text import PATTERN_END

DEFAULT_TENANT = "default"

TrustLevel = Literal["user", "agent", "system"]
Confidence = Literal["high", "medium", "low"]
# What a memory is when its writer does not say: every door and the import take these.
DEFAULT_MEMORY_TYPE = "general"
DEFAULT_CONFIDENCE: Confidence = "medium"
DEFAULT_TRUST: TrustLevel = "agent"
DEFAULT_SOURCE = "api"  # who wrote it, when the writer does not say

# Built-in types; any lower_snake_case name is accepted (the vocabulary is extensible).
KNOWN_MEMORY_TYPES = (
    "general",
    "decision",
    "error_pattern",
    "code_pattern",
    "strategy",
    "anti_pattern",
    "pattern",
    "heuristic",
    "learning",
)
MEMORY_TYPE_PATTERN = r"^[a-z][a-z0-9_]{0,39}" + PATTERN_END

# Ordered from least to most trusted: what an agent wrote, what a person said, what ops set.
TRUST_ORDER: tuple[TrustLevel, ...] = ("agent", "user", "system")


def trust_at_least(minimum: TrustLevel) -> list[str]:
    return list(TRUST_ORDER[TRUST_ORDER.index(minimum) :])


def embedding_text(
    content: str, name: str | None, category: str | None, context: str | None = None
) -> str:
    """What the vector side sees: the content, labelled with its name and category, then
    the situation it came from. The content leads, so that the model's truncation at its
    token limit cuts the context, never the memory."""
    parts = [p for p in (name, category) if p]
    text = f"{' · '.join(parts)}: {content}" if parts else content
    return f"{text}\n(context: {context})" if context else text


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What a client may set; everything else is the server's."""

    content: str
    memory_type: str = DEFAULT_MEMORY_TYPE
    category: str | None = None
    tags: tuple[str, ...] = ()
    source_repo: str | None = None
    task_id: str | None = None
    trust_level: TrustLevel = DEFAULT_TRUST
    confidence: Confidence = DEFAULT_CONFIDENCE
    pinned: bool = False
    source: str = DEFAULT_SOURCE
    name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # The situation the memory came from (the task, the question it answers): searched,
    # returned, but not part of its identity. See migration 0013.
    context: str | None = None
    # The code it is about: where it was written, and which files (repository-relative).
    git_branch: str | None = None
    git_commit: str | None = None
    files: tuple[str, ...] = ()
    personal: bool = False  # its person's alone (docs/team.md)

    def embedding_text(self) -> str:
        return embedding_text(self.content, self.name, self.category, self.context)


@dataclass(frozen=True, slots=True)
class Memory:
    tenant_id: str
    id: UUID
    content: str
    content_hash: str
    memory_type: str
    category: str | None
    tags: list[str]
    source_repo: str | None
    task_id: str | None
    trust_level: str
    confidence: str
    pinned: bool
    source: str
    name: str | None
    metadata: dict[str, Any]
    context: str | None
    observation_count: int
    relevance_score: float
    superseded_by: UUID | None
    access_count: int
    last_accessed_at: datetime | None
    archived_at: datetime | None
    archived_by_admin: bool
    created_at: datetime
    updated_at: datetime
    quarantined_at: datetime | None
    created_by_key: UUID | None
    version: int
    git_branch: str | None
    git_commit: str | None
    files: list[str]
    personal: bool
    person_id: UUID | None
    stale_since: datetime | None
    stale_reason: dict[str, Any] | None
    held_at: datetime | None
    provenance: dict[str, Any] | None
    has_embedding: bool
    intact: bool = True  # the content still matches the hash its writer stored

    @property
    def quarantined(self) -> bool:
        """Marked quarantined: imported as such, or found altered behind the API's back."""
        return self.quarantined_at is not None

    @property
    def held(self) -> bool:
        """Waiting for a person's approval before it is handed over unasked."""
        return self.held_at is not None

    @property
    def servable(self) -> bool:
        """Whether an agent may be handed it: neither quarantined nor altered behind the
        API's back (docs/security.md)."""
        return not self.quarantined and self.intact

    def marked_if_altered(self, now: datetime) -> Memory:
        """The memory as it leaves in an export: quarantined when altered behind the API's
        back, whether or not a search has marked it yet."""
        if self.intact or self.quarantined:
            return self
        return dataclasses.replace(self, quarantined_at=now)

    def embedding_text(self) -> str:
        return embedding_text(self.content, self.name, self.category, self.context)

    def require_changeable(self) -> None:
        """A quarantined or altered memory is changed by no write (feedback, edit, confirm,
        supersede): its answer would hand back text nobody vouches for. An admin reads,
        archives or deletes it."""
        if not self.servable:
            raise ConflictError(
                f"memory {self.id} is quarantined (imported as such, or its content changed"
                " outside the API): an admin can read it with include_quarantined=true,"
                " archive or delete it; nothing else changes it"
            )


@dataclass(frozen=True, slots=True)
class StoreOutcome:
    status: Literal["stored", "reinforced"]
    memory: Memory
    # Reinforced as a near-duplicate of `memory` (other words, the same thing).
    merged: bool = False
    # Stored, and it may contradict this live memory: the writer decides whether to supersede.
    may_supersede: UUID | None = None


def carried_over(old: Memory, replacement: NewMemory) -> NewMemory:
    """A supersede's replacement with what it left out taken from the memory it replaces:
    the repository, the files it is about, where it was written, its tags and category, and
    the pin (a pinned rule's correction stays pinned). It reaches whom the old one reached:
    a team memory's correction is the team's, a personal one's stays personal."""
    return dataclasses.replace(
        replacement,
        source_repo=replacement.source_repo or old.source_repo,
        files=replacement.files or tuple(old.files),
        git_branch=replacement.git_branch or old.git_branch,
        git_commit=replacement.git_commit or old.git_commit,
        tags=replacement.tags or tuple(old.tags),
        category=replacement.category or old.category,
        pinned=replacement.pinned or old.pinned,
        personal=old.personal,
    )


def outcome_note(outcome: StoreOutcome) -> str:
    """What a writer should know beyond stored or reinforced, in its answer's message."""
    held = (
        "; held for a person's review before other sessions are handed it (this session"
        " read untrusted input, or it tells an agent to run downloaded code or send data out)"
        if outcome.memory.held  # app/domain/provenance.py
        else ""
    )
    return held + _kin_note(outcome)


def _kin_note(outcome: StoreOutcome) -> str:
    if outcome.merged:
        return f" (a near-duplicate of memory {outcome.memory.id}, which it reinforced)"
    if outcome.may_supersede is not None:
        return (
            f"; it may contradict memory {outcome.may_supersede}: supersede that one if this"
            " replaces it"
        )
    return ""
