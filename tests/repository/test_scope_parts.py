"""A filter's scope as parts an index can count apart: together they hold exactly the
filter's rows (quarantined ones too), each row once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import asyncpg
import pytest

from app.domain.filters import MemoryFilter
from app.repository.filters import filter_sql, scope_parts
from app.repository.search_statement import SearchStatement

TENANT = "scope-parts-test"
ROWS = [  # (source_repo, memory_type, archived, quarantined)
    ("api", "decision", False, False),
    ("api", "learning", False, True),
    ("api", "decision", True, False),
    ("web", "decision", False, False),
    (None, "decision", False, False),
    (None, "learning", False, True),
]


@pytest.fixture
async def rows(db: asyncpg.Connection) -> AsyncIterator[None]:
    await db.executemany(
        "INSERT INTO memories (tenant_id, content, content_hash, source_repo, memory_type,"
        " archived_at, quarantined_at)"
        " VALUES ($1, $2, memory_content_hash($2), $3, $4,"
        " CASE WHEN $5 THEN now() END, CASE WHEN $6 THEN now() END)",
        [(TENANT, f"memory {i}", *row) for i, row in enumerate(ROWS)],
    )
    yield
    await db.execute("DELETE FROM memories WHERE tenant_id = $1", TENANT)


async def contents(
    db: asyncpg.Connection, wheres: list[str], statement: SearchStatement
) -> list[str]:
    """The rows of each WHERE clause, one after the other (a row in two clauses twice)."""
    statement.sql = " UNION ALL ".join(
        f"SELECT m.content FROM memories m WHERE {where}" for where in wheres
    )
    statement.values["tenant"] = TENANT
    text, args = statement.compiled()
    return [r["content"] for r in await db.fetch(text, *args)]


@pytest.mark.parametrize(
    "f",
    [
        MemoryFilter(source_repo="api"),
        MemoryFilter(source_repo="api", include_global=False),
        MemoryFilter(),
        MemoryFilter(source_repo="api", memory_types=["decision"], include_archived=True),
    ],
)
async def test_the_parts_hold_the_scope_once_quarantined_rows_included(
    db: asyncpg.Connection, rows: None, f: MemoryFilter
) -> None:
    in_parts, whole = SearchStatement(), SearchStatement()
    parts = scope_parts(f, in_parts.bind, tenant=":tenant")
    everything = filter_sql(replace(f, include_quarantined=True), whole.bind, ":tenant")
    found = await contents(db, parts, in_parts)
    assert found and sorted(found) == sorted(await contents(db, [everything], whole))
    assert len(found) == len(set(found))  # no row in two parts
    # With a repository and the global rows, those are counted apart: two parts.
    assert len(parts) == (2 if f.source_repo and f.include_global else 1)
