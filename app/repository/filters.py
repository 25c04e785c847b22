"""A MemoryFilter (app/domain/filters.py) as SQL, in one place, for search and list; and
the optional repository of /stats, export and pruning."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from app.domain.filters import MemoryFilter

Bind = Callable[[Any], str]


def in_repository(column: str = "m.source_repo") -> str:
    """Rows of the repository `:source_repo`, or every row when it is NULL (the global
    memories are not a repository's here, unlike in a search)."""
    return f"(:source_repo::text IS NULL OR {column} = :source_repo)"


def filter_sql(f: MemoryFilter, bind: Bind, tenant: str) -> str:
    """The WHERE clauses over `memories m`, the tenant (`tenant`, its placeholder) first.
    The content-hash check of quarantine is the caller's: a list checks each row (INTACT),
    a search only the rows it may return."""
    clauses = [f"m.tenant_id = {tenant}"]
    if not f.include_superseded:
        clauses.append("m.superseded_by IS NULL")
    if not f.include_archived:
        clauses.append("m.archived_at IS NULL")
    if not f.include_quarantined:
        clauses.append("m.quarantined_at IS NULL")
    if f.source_repo is not None and f.include_global:
        clauses.append(f"(m.source_repo = {bind(f.source_repo)} OR m.source_repo IS NULL)")
    elif f.source_repo is not None:
        clauses.append(f"m.source_repo = {bind(f.source_repo)}")
    if f.memory_types:
        clauses.append(f"m.memory_type = ANY({bind(list(f.memory_types))}::text[])")
    if f.tags:
        clauses.append(f"m.tags @> {bind(list(f.tags))}::text[]")
    if f.trust_levels:
        clauses.append(f"m.trust_level = ANY({bind(list(f.trust_levels))}::text[])")
    if f.min_relevance is not None:
        clauses.append(f"m.relevance_score >= {bind(f.min_relevance)}::real")
    return " AND ".join(clauses)


def scope_parts(f: MemoryFilter, bind: Bind, tenant: str) -> list[str]:
    """The filter as disjoint parts whose union is its scope, each one range of
    (tenant_id, source_repo): a repository's rows and the global ones apart, where their
    OR would read the heap. Quarantine is left out, so that a count of a part reads the
    index alone (memories_scope_count_key): what counts the scope's size (N for IDF) need
    not tell the few quarantined rows apart."""
    f = replace(f, include_quarantined=True)
    if f.source_repo is None or not f.include_global:
        return [filter_sql(f, bind, tenant)]
    global_rows = replace(f, source_repo=None)
    return [
        filter_sql(replace(f, include_global=False), bind, tenant),
        filter_sql(global_rows, bind, tenant) + " AND m.source_repo IS NULL",
    ]


def function_args(f: MemoryFilter, bind: Bind) -> str:
    """The same filter as the arguments of the SQL functions that read the indexes
    (memory_keyword_hits, memory_vector_candidates: app/repository/functions/)."""
    return ", ".join(
        (
            f"{bind(f.source_repo)}::text",
            f"{bind(list(f.memory_types) if f.memory_types else None)}::text[]",
            f"{bind(list(f.tags) if f.tags else None)}::text[]",
            f"{bind(list(f.trust_levels) if f.trust_levels else None)}::text[]",
            f"{bind(f.min_relevance)}::real",
            f"{bind(f.include_archived)}::boolean",
            f"{bind(f.include_global)}::boolean",
        )
    )


def is_narrowed(f: MemoryFilter) -> bool:
    """Whether the filter keeps a part of the tenant's rows (N for IDF is then counted)."""
    return bool(f.source_repo or f.memory_types or f.tags or f.trust_levels)
