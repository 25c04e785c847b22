"""The nearest memories within a scope, read in one place: memory_nearest() (migrations/sql/
memory_nearest/), which chooses between an exact read and the HNSW graph by the scope's
size (counted up to its bound, in order; a repository's own graph where it has one) and
returns at most max_rows rows for each query vector, nearest first. Its three callers:

    search          memory_vector_candidates(), the search statement's vector side
    near-duplicates the write path's check of new memories against the stored ones
                    (near_duplicates() here, for MemoryRepository.nearest_each)
    tidy            each memory's neighbours (app/repository/tidy.py)

A scope is the tenant's memories that a filter keeps (memory_matches), of one repository,
with or without the global memories, or of the global memories alone; which a person sees
is the row policy's (migration 0045)."""

from __future__ import annotations

from typing import Any

from app.domain.filters import MemoryFilter
from app.repository.filters import Bind, filter_value
from app.repository.rows import INTACT

# A read of a few nearest (the near-duplicate check's NEAREST, tidy's) finds them in the
# graph's first round with a repository's share of the rows, where a search asks for its
# candidates: so the graph wins over an exact read at a smaller scope, and such a read
# sizes its bound for a graph this many times smaller (sqrt(factor x rows / 20)). Measured
# for the near-duplicate check (bench.nearest_cost, docs/benchmarks.md) when the exact read
# took a page for each row; ranking the index alone (migration 0040) is cheaper, and
# would take a smaller divisor: not measured again.
NEAREST_GRAPH_DIVISOR = 20


def nearest_rows(
    queries: str,
    max_rows: str,
    scope: MemoryFilter,
    bind: Bind,
    global_only: bool = False,
) -> str:
    """The call of memory_nearest() (SQL, a set of ord, id, ..., vector_similarity) for the
    query vectors `queries` (SQL of a vector[]), a few nearest each (NEAREST_GRAPH_DIVISOR),
    within `scope` (a filter of the tenant `:tenant_id`; `global_only`: of its global
    memories alone)."""
    share = f"{1 / NEAREST_GRAPH_DIVISOR}::real"
    return (
        f"memory_nearest({queries}, {max_rows}, :tenant_id, {filter_value(scope, bind)},"
        f" {str(global_only).lower()}, {share})"
    )


def near_duplicates(
    source_repo: str | None, distributed: bool, one: bool
) -> tuple[str, dict[str, Any]]:
    """The statement the write path sends for new memories of `source_repo` (None: global
    ones), and the values its scope binds: the live memories nearest each one's vector (its
    `ord`, in the order given: `:embeddings`, or `:embedding` for one), in its own
    repository (or, for a global one, among the global ones), the team's or its person's as
    the row policy shows them, at most `:nearest`; and whether the vectors compare with the
    stored ones (`fits`: false when the stored vectors are another model's, and then no
    rows). The few found are then checked whole (the integrity check hashes each row); the
    memories of the chunk itself are not stored yet: the service compares them
    (app/domain/duplicates.py).
    On Citus the statement runs on the tenant's worker, where a function reading the model
    table cannot, and re-embedding is for one PostgreSQL: no model is asked there.
    One memory (a single store) is an array of one, a chunk an array: each shape keeps
    one generic plan per connection (MemoryRepository.writing())."""
    values: dict[str, Any] = {}

    def bind(value: Any, name: str) -> str:
        values[name] = value
        return f":{name}"

    # None when they do not compare: the read finds nothing, and compares nothing.
    vectors = "ARRAY[:embedding::vector]" if one else ":embeddings::vector[]"
    queries = f"CASE WHEN f.fits THEN {vectors} END"
    scope = MemoryFilter(source_repo=source_repo, include_global=False)
    read = nearest_rows(queries, ":nearest", scope, bind, global_only=source_repo is None)
    fits = "true" if distributed else "memory_vector_fits(:embedding_model)"
    statement = f"""
SELECT f.fits, n.ord, m.id, m.content, m.memory_type, m.personal,
       n.vector_similarity AS similarity
FROM (SELECT {fits} AS fits) f
LEFT JOIN LATERAL (
    SELECT n.ord, n.id, n.vector_similarity FROM {read} n
) n ON true
LEFT JOIN memories m ON m.tenant_id = :tenant_id AND m.id = n.id
WHERE n.id IS NULL OR {INTACT}
ORDER BY n.ord, n.vector_similarity DESC
"""
    return statement, values
