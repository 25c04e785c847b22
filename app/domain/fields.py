"""A memory's fields, once: who may set each, whether it can be edited, exported, searched.

Every other shape of a memory is derived from this table or checked against it by
tests/contracts/test_memory_fields.py: the domain types (NewMemory, Memory), the drafts the
doors build, the REST and MCP inputs, the output models, the column list and row mapping
(app/repository/rows.py), the bind values of the store, and the export record. Adding a
field: a row here, a migration, the domain types, the docs (docs/architecture.md has the
recipe); a forgotten shape fails the contract test.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, Field

from app.domain.memory import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MEMORY_TYPE,
    DEFAULT_SOURCE,
    DEFAULT_TRUST,
    KNOWN_MEMORY_TYPES,
)
from app.domain.validation import Limits

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from app.domain.memory import Memory

Setter = Literal["client", "server"]


@dataclass(frozen=True, slots=True)
class MemoryField:
    name: str
    set_by: Setter  # "client": a writer may set it (drafts, inputs, import); else the server's
    editable: bool = False  # PATCH /memories/{id} may change it
    exported: bool = True  # an export line carries it (and an import restores it)
    searchable: bool = False  # the keyword side reads it (migration 0013's weights)
    stored: bool = True  # a column of `memories` (False: computed or looked up when read)
    audited: bool = False  # an audit entry keeps it, and an undo puts it back
    doc: str = ""


MEMORY_FIELDS: tuple[MemoryField, ...] = (
    MemoryField("tenant_id", "server", exported=False, doc="From the key, never the request"),
    MemoryField("id", "server"),
    MemoryField("content", "client", searchable=True, doc="The memory itself"),
    MemoryField("content_hash", "server", doc="SHA-256 of the normalised content"),
    MemoryField("memory_type", "client"),
    MemoryField("category", "client", editable=True, searchable=True, audited=True),
    MemoryField("tags", "client", editable=True, searchable=True, audited=True),
    MemoryField("source_repo", "client", doc="The repository; none: global"),
    MemoryField("task_id", "client"),
    MemoryField("trust_level", "client", doc="agent, user or system"),
    MemoryField("confidence", "client", editable=True, audited=True),
    MemoryField("pinned", "client", editable=True, audited=True),
    MemoryField("source", "client"),
    MemoryField("name", "client"),
    MemoryField("metadata", "client", editable=True, audited=True),
    MemoryField("context", "client", searchable=True, doc="The situation it came from"),
    MemoryField("git_branch", "client", doc="The branch it was written on"),
    MemoryField("git_commit", "client", doc="The commit it was written at", audited=True),
    MemoryField("files", "client", doc="The repository's files it is about"),
    # Its person's alone: no other person's key is ever handed it (docs/team.md).
    MemoryField("personal", "client", doc="Reaches only its person's keys"),
    MemoryField("observation_count", "server"),
    MemoryField("relevance_score", "server", audited=True),
    MemoryField("superseded_by", "server", audited=True),
    # Kept beside the memory, in memory_access: counting a read never rewrites its row.
    MemoryField("access_count", "server", stored=False),
    MemoryField("last_accessed_at", "server", stored=False),
    MemoryField("archived_at", "server", audited=True),
    # An admin's archive holds against agents' re-stores; the forgetting curve's does not.
    MemoryField("archived_by_admin", "server", exported=False, doc="Archived by an admin"),
    MemoryField("created_at", "server"),
    MemoryField("updated_at", "server", exported=False),
    MemoryField("quarantined_at", "server", audited=True),
    MemoryField("created_by_key", "server", exported=False),
    MemoryField("person_id", "server", exported=False, doc="The person whose key wrote it"),
    MemoryField("version", "server", exported=False),
    # Relative to one checkout's history: not exported (the next session start marks again).
    MemoryField(
        "stale_since", "server", exported=False, doc="A file it is about changed", audited=True
    ),
    MemoryField("stale_reason", "server", exported=False, doc="Which file, at which commit"),
    # Waiting for a person before it is handed over unasked (app/domain/provenance.py).
    MemoryField("held_at", "server", audited=True, doc="Held for a person's review since"),
    MemoryField("provenance", "server", doc="The untrusted sources read before it was written"),
    MemoryField("has_embedding", "server", exported=False, stored=False),
    MemoryField("intact", "server", exported=False, stored=False),
)

BY_NAME = {f.name: f for f in MEMORY_FIELDS}
CLIENT_FIELDS = tuple(f.name for f in MEMORY_FIELDS if f.set_by == "client")
EDITABLE_FIELDS = tuple(f.name for f in MEMORY_FIELDS if f.editable)
STORED_COLUMNS = tuple(f.name for f in MEMORY_FIELDS if f.stored)
EXPORTED_FIELDS = tuple(f.name for f in MEMORY_FIELDS if f.exported)
AUDITED_FIELDS = tuple(f.name for f in MEMORY_FIELDS if f.audited)


T = TypeVar("T", bound="DataclassInstance")

_LIMITS = Limits()


class WrittenAt(BaseModel):
    """Where a memory was written: its repository, branch and commit, and the files it is
    about (a memory and a learning take them alike)."""

    source_repo: str | None = Field(
        default=None,
        description="The repository it belongs to; null: global (every repository's sessions).",
    )
    git_branch: str | None = Field(
        default=None,
        description="The branch it was written on (a search may prefer the current one).",
    )
    git_commit: str | None = Field(
        default=None, description="The commit it was written at (7 to 64 hex digits)."
    )
    files: list[str] = Field(
        default_factory=list,
        description="Repository-relative paths of the files it is about: when one changes,"
        " the memory is marked possibly stale until reinforced, edited or confirmed.",
    )
    personal: bool = Field(
        default=False,
        description="Only its person's keys (and their agents) are ever handed it: a"
        " preference of theirs, not the team's. Needs a key that acts for a person.",
    )


class WritableMemory(WrittenAt):
    """What a writer may set of a memory (CLIENT_FIELDS), declared once as the doors show
    it: the store's body (app/api/schemas/memories.py), the export line and the answer
    (ExportedMemory, MemoryOut) inherit it. Types and descriptions only: the rules are the
    domain's, shown in OpenAPI by the body that takes them (MEMORY_RULES)."""

    content: str = Field(description="The memory itself.")
    memory_type: str = Field(
        default=DEFAULT_MEMORY_TYPE,
        description=f"One of {', '.join(KNOWN_MEMORY_TYPES)}, or any other lower_snake_case name.",
    )
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    task_id: str | None = None
    trust_level: str = DEFAULT_TRUST
    confidence: str = DEFAULT_CONFIDENCE
    pinned: bool = False
    source: str = DEFAULT_SOURCE
    name: str | None = None
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description=f"Any JSON object up to {_LIMITS.max_metadata_bytes} bytes,"
        f" {_LIMITS.max_metadata_depth} levels deep.",
    )
    context: str | None = Field(
        default=None,
        description="The situation the memory came from (the task, the question it answers,"
        " the turn before it): searched with the memory, at a lower weight than its content,"
        " and returned with it. Not part of its identity: the same content in another context"
        " reinforces the stored memory, whose context stays.",
    )


def fields_of(memory: Memory, shape: type[BaseModel], *besides: str) -> dict[str, Any]:
    """The memory's own values for a shape's fields (all but `besides`), by name."""
    return {name: getattr(memory, name) for name in shape.model_fields if name not in besides}


def by_name(kind: type[T], source: Any) -> T:
    """A `kind` dataclass of `source`'s values for its fields, taken by name."""
    return kind(**{f.name: getattr(source, f.name) for f in dataclasses.fields(kind)})
