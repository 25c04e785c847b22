"""Mapping between memories rows and the domain type."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, get_args, get_type_hints
from uuid import UUID

from app.domain.fields import CLIENT_FIELDS, MEMORY_FIELDS
from app.domain.memory import Memory, NewMemory

# Whether a row still matches the hashes its writer stored: a row edited behind the API's
# back does not, and is never served to an agent (docs/security.md).
INTACT = (
    "(m.content_hash = memory_content_hash(m.content)"
    " AND m.context_hash IS NOT DISTINCT FROM memory_content_hash(m.context))"
)
# An imported line's state columns (what its life added to it) as the import writes them:
# each as the line carried it, but for two the statement decides. A line whose content no
# longer matches the hash it carries was altered after its writer stored it: it comes in
# quarantined. One without a creation time was created by the import (`:imported_at`, the
# statement's own time: Citus takes no now() inside CASE).
_DECIDED_ON_IMPORT = {
    "quarantined_at": (
        "CASE WHEN :file_hash::text IS NULL OR :file_hash = memory_content_hash(:content)"
        " THEN :quarantined_at::timestamptz ELSE coalesce(:quarantined_at, :imported_at) END"
    ),
    "created_at": "coalesce(:created_at, :imported_at)",
}


def imported_values(columns: Sequence[str]) -> str:
    return ", ".join(_DECIDED_ON_IMPORT.get(name, f":{name}") for name in columns)


def live(alias: str = "m") -> str:
    """A live memory, neither superseded nor archived (memory_matches() says it in SQL, and
    memory_is_live() leaves out the quarantined too): written once, for the statements
    (`alias` "m") and for the partial indexes' predicates made at run time (no alias)."""
    at = f"{alias}." if alias else ""
    return f"{at}superseded_by IS NULL AND {at}archived_at IS NULL"


LIVE = live()

# Marked quarantined (imported as such, or found altered), and the mark itself.
QUARANTINED = "m.quarantined_at IS NOT NULL"
MARK_QUARANTINED = "quarantined_at = now()"
# Served to agents: intact and not quarantined.
SERVABLE = f"(NOT {QUARANTINED} AND {INTACT})"

# A memory's access counts, kept beside it in memory_access (migration 0030): a search
# that counts what it returned writes that small row, never the memory's own, whose every
# rewrite off its page would enter its vector into the HNSW graph again.
# (By :tenant_id, not m.tenant_id: Citus then sends the statement to the tenant's shard.)
_ACCESS_ROW = "FROM memory_access a WHERE a.tenant_id = :tenant_id AND a.memory_id = m.id"
ACCESS_COUNT = f"coalesce((SELECT a.access_count {_ACCESS_ROW}), 0)"
LAST_ACCESSED_AT = f"(SELECT a.last_accessed_at {_ACCESS_ROW})"

# Every field of app/domain/fields.py: the stored columns, then those computed or looked up
# when read. Embeddings and search vectors never leave the database.
_COMPUTED = {
    "access_count": ACCESS_COUNT,
    "last_accessed_at": LAST_ACCESSED_AT,
    "has_embedding": "(m.embedding IS NOT NULL)",
    "intact": INTACT,
}


def memory_columns(instead: Mapping[str, str] | None = None) -> str:
    """The select list of a memory row; `instead` gives some fields another expression."""
    exprs = {**_COMPUTED, **(instead or {})}
    return ",\n    ".join(
        f"{exprs[f.name]} AS {f.name}" if f.name in exprs else f"m.{f.name}" for f in MEMORY_FIELDS
    )


MEMORY_COLUMNS = memory_columns()


def returning_memories(write: str, **extra: str) -> str:
    """`write`, an INSERT or UPDATE of `memories AS m` without RETURNING, answering with the
    rows it wrote as memories (and `extra` expressions of them, by name). The access counts
    are looked up in a select of the written rows, not in RETURNING: Citus takes no
    subquery there."""
    returned = "".join(f", {expr} AS {name}" for name, expr in extra.items())
    names = "".join(f", m.{name}" for name in extra)
    return (
        f"WITH written AS (\n{write.strip()}\nRETURNING m.*{returned}\n)\n"
        f"SELECT {MEMORY_COLUMNS}{names} FROM written m"
    )


_NAMES = tuple(f.name for f in MEMORY_FIELDS)


def to_memory(row: Any) -> Memory:
    values = {name: row[name] for name in _NAMES}
    values["tags"] = list(values["tags"])
    values["files"] = list(values["files"])
    values["relevance_score"] = float(values["relevance_score"])
    return Memory(**values)


def _from_json(hint: Any) -> Callable[[Any], Any] | None:
    """How a field of this type reads from its JSON value (None: as it is)."""
    kinds = {hint, *get_args(hint)}
    if UUID in kinds:
        return UUID
    if datetime in kinds:
        return datetime.fromisoformat
    return None


# A memory's fields that JSON carries as text: ids and times.
_JSON_FIELDS = {
    name: read for name, hint in get_type_hints(Memory).items() if (read := _from_json(hint))
}


def from_json(row: Mapping[str, Any], **more: Callable[[Any], Any]) -> dict[str, Any]:
    """A row that came as a JSON object (to_jsonb of a memory's columns: a statement run on
    a Citus worker, memory_search_on_worker()) with its values as asyncpg reads the columns;
    `more` reads other columns by name."""
    reads = {**_JSON_FIELDS, **more}
    return {
        name: reads[name](value) if value is not None and name in reads else value
        for name, value in row.items()
    }


# One memory per content, repository and reader: the team's, or one person's alone
# (personal_to, generated from personal and person_id: migration 0045).
DEDUP_KEY = "(tenant_id, source_repo, personal_to, content_hash)"
# Whom a new row's writer acts for: the key, and its person (the unit of work's).
WRITER_COLUMNS = "created_by_key, person_id"
WRITER_VALUES = ":created_by_key, :person_id"

# What a writer sets (app/domain/fields.py), as an INSERT's columns and named values.
CLIENT_COLUMNS = ", ".join(CLIENT_FIELDS)
CLIENT_VALUES = ", ".join(f":{name}" for name in CLIENT_FIELDS)


def client_values(new: NewMemory) -> dict[str, Any]:
    values = {name: getattr(new, name) for name in CLIENT_FIELDS}
    values["tags"] = list(values["tags"])
    values["files"] = list(values["files"])
    return values
