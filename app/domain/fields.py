"""A memory's fields, once: who may set each, whether it can be edited, exported, searched.

Every other shape of a memory is derived from this table or checked against it by
tests/contracts/test_memory_fields.py: the domain types (NewMemory, Memory), the drafts the
doors build, the REST and MCP inputs, the output models, the column list and row mapping
(app/repository/rows.py), the bind values of the store, and the export record. Adding a
field: a row here, a migration, the domain types, the docs (docs/architecture.md has the
recipe); a forgotten shape fails the contract test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Setter = Literal["client", "server"]


@dataclass(frozen=True, slots=True)
class MemoryField:
    name: str
    set_by: Setter  # "client": a writer may set it (drafts, inputs, import); else the server's
    editable: bool = False  # PATCH /memories/{id} may change it
    exported: bool = True  # an export line carries it (and an import restores it)
    searchable: bool = False  # the keyword side reads it (migration 0013's weights)
    stored: bool = True  # a column of `memories` (False: computed when read)
    doc: str = ""


MEMORY_FIELDS: tuple[MemoryField, ...] = (
    MemoryField("tenant_id", "server", exported=False, doc="From the key, never the request"),
    MemoryField("id", "server"),
    MemoryField("content", "client", searchable=True, doc="The memory itself"),
    MemoryField("content_hash", "server", doc="SHA-256 of the normalised content"),
    MemoryField("memory_type", "client"),
    MemoryField("category", "client", editable=True, searchable=True),
    MemoryField("tags", "client", editable=True, searchable=True),
    MemoryField("source_repo", "client", doc="The repository; none: global"),
    MemoryField("task_id", "client"),
    MemoryField("trust_level", "client", doc="agent, user or system"),
    MemoryField("confidence", "client", editable=True),
    MemoryField("pinned", "client", editable=True),
    MemoryField("source", "client"),
    MemoryField("name", "client"),
    MemoryField("metadata", "client", editable=True),
    MemoryField("context", "client", searchable=True, doc="The situation it came from"),
    MemoryField("observation_count", "server"),
    MemoryField("relevance_score", "server"),
    MemoryField("superseded_by", "server"),
    MemoryField("access_count", "server"),
    MemoryField("last_accessed_at", "server"),
    MemoryField("archived_at", "server"),
    MemoryField("created_at", "server"),
    MemoryField("updated_at", "server", exported=False),
    MemoryField("quarantined_at", "server"),
    MemoryField("created_by_key", "server", exported=False),
    MemoryField("version", "server", exported=False),
    MemoryField("has_embedding", "server", exported=False, stored=False),
    MemoryField("intact", "server", exported=False, stored=False),
)

BY_NAME = {f.name: f for f in MEMORY_FIELDS}
CLIENT_FIELDS = tuple(f.name for f in MEMORY_FIELDS if f.set_by == "client")
EDITABLE_FIELDS = tuple(f.name for f in MEMORY_FIELDS if f.editable)
STORED_COLUMNS = tuple(f.name for f in MEMORY_FIELDS if f.stored)
EXPORTED_FIELDS = tuple(f.name for f in MEMORY_FIELDS if f.exported)
