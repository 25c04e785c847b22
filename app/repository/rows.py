"""Mapping between memories rows and the domain type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.domain.fields import CLIENT_FIELDS, MEMORY_FIELDS
from app.domain.memory import Memory, NewMemory

# Whether a row still matches the hashes its writer stored: a row edited behind the API's
# back does not, and is never served to an agent (docs/security.md).
INTACT = (
    "(m.content_hash = memory_content_hash(m.content)"
    " AND m.context_hash IS NOT DISTINCT FROM memory_content_hash(m.context))"
)
# Served to agents: intact and not quarantined.
SERVABLE = f"(m.quarantined_at IS NULL AND {INTACT})"

# Every field of app/domain/fields.py: the stored columns, then those computed when read.
# Embeddings and search vectors never leave the database.
_COMPUTED = {
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
_NAMES = tuple(f.name for f in MEMORY_FIELDS)


def to_memory(row: Any) -> Memory:
    values = {name: row[name] for name in _NAMES}
    values["tags"] = list(values["tags"])
    values["files"] = list(values["files"])
    values["relevance_score"] = float(values["relevance_score"])
    return Memory(**values)


# What a writer sets (app/domain/fields.py), as an INSERT's columns and named values.
CLIENT_COLUMNS = ", ".join(CLIENT_FIELDS)
CLIENT_VALUES = ", ".join(f":{name}" for name in CLIENT_FIELDS)


def client_values(new: NewMemory) -> dict[str, Any]:
    values = {name: getattr(new, name) for name in CLIENT_FIELDS}
    values["tags"] = list(values["tags"])
    values["files"] = list(values["files"])
    return values
