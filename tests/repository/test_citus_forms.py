"""The two forms that crashed the Citus coordinator inside the search statement (a
segmentation fault, Citus built from ../shared/vendor/, 2026-11-26; reproduced and traced to
one planner fault in docs/scale-out.md, "Two crashes") never reach it: an INSERT among its
CTEs (the count of what it returned), and a read of the catalog's pg_class, either of which
makes Citus plan the statement recursively. The coordinator gets one call, which the
tenant's worker runs (migration 0036); the statement that call carries is planned there by
PostgreSQL alone, against the shards, and reads no catalog either. Read from the statements as the
Citus back end renders them, for each shape of filter and each side."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from app.domain.filters import MemoryFilter
from app.repository.search_statement import SearchParams, search_statement

INSERT_AMONG_CTES = re.compile(r"\bAS\s+(?:(?:NOT\s+)?MATERIALIZED\s+)?\(\s*INSERT\b", re.I)
CATALOG = re.compile(r"\bpg_class\b|\bpg_catalog\.pg_", re.I)


@pytest.mark.parametrize(
    "kept",
    [
        MemoryFilter(),
        MemoryFilter(source_repo="acme/api"),
        MemoryFilter(source_repo="acme/api", include_global=False, tags=["ci"]),
        MemoryFilter(memory_types=["decision"], since=datetime(2026, 11, 1, tzinfo=UTC)),
    ],
)
@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_the_citus_search_reads_no_catalog(kept: MemoryFilter, alpha: float) -> None:
    params = SearchParams(
        query="deploy canary", embedding=[0.0] * 384, alpha=alpha, limit=5, candidates=20,
        term_cap=100, decay_weight=0.3, strength_days=30, track_access=True,
    )  # fmt: skip
    call, values = search_statement("t", kept, params, distributed=True).worker_call()
    assert not CATALOG.search(call) and not INSERT_AMONG_CTES.search(call)
    assert not CATALOG.search(values["statement"])
    # The single node's statement is the same statement (the tables aside).
    one_node = search_statement("t", kept, params)
    assert one_node.sql == search_statement("t", kept, params, distributed=True).sql
