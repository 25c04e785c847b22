"""A MemoryFilter (app/domain/filters.py) as SQL, in one place, for search, list and export;
and the optional repository of /stats, export and pruning.

In SQL the filter is one value of the database's type memory_filter, and one predicate,
memory_matches(m, filter), says which memories it keeps (migrations/sql/memory_matches/):
every statement reads memories through it, and the index readers take it as their one
filter argument. FILTER_FIELDS is MemoryFilter's fields, in order: adding a filter is a
field of MemoryFilter, and a field of the type and a line of the predicate (a migration)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

from app.domain.filters import MemoryFilter
from app.repository.rows import INTACT

# bind(value, name): the placeholder of a value bound under (or after) that name.
Bind = Callable[[Any, str], str]

# memory_filter (the database type) has MemoryFilter's fields, in its order; these few
# under shorter names.
_SQL_NAMES = {
    "source_repo": "repo",
    "include_global": "with_global",
    "memory_types": "types",
    "trust_levels": "trust",
    "person_id": "person",
}
# Each field's SQL type, by its Python type's name.
_SQL_TYPES = {
    "str | None": "text",
    "bool": "boolean",
    "Sequence[str] | None": "text[]",
    "float | None": "real",
    "datetime | None": "timestamptz",
    "UUID | None": "uuid",
}


def _sql_value(value: Any) -> Any:
    return list(value) if isinstance(value, (list, tuple)) else value


# memory_filter's fields, in the type's order: (its name, its SQL type, MemoryFilter's name).
FILTER_FIELDS: tuple[tuple[str, str, str], ...] = tuple(
    (_SQL_NAMES.get(f.name, f.name), _SQL_TYPES[str(f.type)], f.name) for f in fields(MemoryFilter)
)


def only_repository_rows(column: str = "m.source_repo") -> str:
    """Rows of the repository `:source_repo`, or every row when it is NULL (the global
    memories are not a repository's here, unlike in a search)."""
    return f"(:source_repo::text IS NULL OR {column} = :source_repo)"


def filter_value(f: MemoryFilter, bind: Bind) -> str:
    """The filter as one SQL value. A field left unset and each flag are written as
    constants, the rest bound: the statement's shape then says which fields filter, and
    even a generic plan folds the others away (and sees a partial index's predicate)."""
    fields = []
    for name, sql_type, attribute in FILTER_FIELDS:
        value = _sql_value(getattr(f, attribute))
        if value in (None, []):
            fields.append(f"NULL::{sql_type}")
        elif isinstance(value, bool):
            fields.append(str(value).lower())
        else:
            fields.append(f"{bind(value, f'filter_{name}')}::{sql_type}")
    return f"ROW({', '.join(fields)})::memory_filter"


def filter_sql(f: MemoryFilter, bind: Bind, tenant: str) -> str:
    """The WHERE clauses over `memories m`: the tenant (`tenant`, its placeholder), the
    repository's range, and memory_matches(). The range says again what the predicate says
    of the repository, in a form a plan made for any value can take to an index. The
    content-hash check of quarantine is the caller's: a list checks each row (INTACT), a
    search only the rows it may return."""
    clauses = [f"m.tenant_id = {tenant}"]
    if f.source_repo is not None:
        repo = f"m.source_repo = {bind(f.source_repo, 'filter_repo')}"
        clauses.append(f"({repo} OR m.source_repo IS NULL)" if f.include_global else repo)
    clauses.append(f"memory_matches(m, {filter_value(f, bind)})")
    return " AND ".join(clauses)


def served_sql(f: MemoryFilter, bind: Bind, tenant: str) -> str:
    """filter_sql for a list or an export: each row also checked against its hash (an
    altered row is served only where quarantined ones are asked for)."""
    where = filter_sql(f, bind, tenant)
    return where if f.include_quarantined else f"{where} AND {INTACT}"


def scope_parts(f: MemoryFilter, bind: Bind, tenant: str) -> list[str]:
    """The filter as disjoint parts whose union is its scope, each one range of
    (tenant_id, source_repo): a repository's rows and the global ones apart, where their
    OR would read the heap. Quarantine is left out, so that a count of a part reads the
    index alone (memories_scope_count_key): what counts the scope's size (N for IDF) need
    not tell the few quarantined rows apart."""
    f = replace(f, include_quarantined=True)
    if f.source_repo is None or not f.include_global:
        return [filter_sql(f, bind, tenant)]
    return [
        filter_sql(replace(f, include_global=False), bind, tenant),
        f"m.tenant_id = {tenant} AND m.source_repo IS NULL"
        f" AND memory_matches(m, {filter_value(replace(f, source_repo=None), bind)})",
    ]
