"""One search for both back ends: the statement one PostgreSQL runs and the one a Citus
worker runs against the tenant's shards return the same memories in the same order, for
the same data and the same query, whatever the filter. Both go through the repository as
the service calls it; 60 cases that hypothesis draws over queries, sides, term budgets and
filters.

Runs with --citus (both back ends are needed: the cluster, and a database of its own on
the single-node server); skipped otherwise."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.db.migrations import upgrade_head_async
from app.db.pool import prepare_session, search_settings
from app.db.unit_of_work import Database, unit_of_work
from app.domain.filters import MemoryFilter
from app.repository.search import SearchRepository
from app.repository.search_statement import SearchParams
from tests.helpers.citus import reset_tables

pytestmark = pytest.mark.citus

TENANT = "one-search"
WORDS = [
    "deploy",
    "canary",
    "rollback",
    "migration",
    "index",
    "vacuum",
    "flaky",
    "test",
    "timeout",
    "retry",
    "cache",
    "postgres",
    "citus",
    "shard",
    "worker",
    "queue",
    "lock",
    "deadlock",
    "backfill",
    "column",
    "schema",
]
TYPES = ("decision", "error_pattern", "code_pattern")
TAGS = ("ci", "db", "ops")
REPOS = (None, "acme/api", "acme/web")
NOW = datetime(2026, 11, 29, tzinfo=UTC)
EXACT_FACTOR = Settings.model_fields["vector_exact_factor"].default


def unit_vector(rng: random.Random) -> list[float]:
    vector = [rng.gauss(0, 1) for _ in range(384)]
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector]


@dataclass(frozen=True)
class Row:
    id: uuid.UUID
    content: str
    memory_type: str
    tags: list[str]
    source_repo: str | None
    created_at: datetime
    embedding: list[float]


def the_rows(rng: random.Random, count: int) -> list[Row]:
    return [
        Row(
            id=uuid.UUID(int=rng.getrandbits(128)),
            content=f"note {i}: " + " ".join(rng.sample(WORDS, rng.randint(2, 6))),
            memory_type=rng.choice(TYPES),
            tags=rng.sample(TAGS, rng.randint(0, 2)),
            source_repo=rng.choice(REPOS),
            created_at=NOW - timedelta(days=rng.randint(0, 60)),
            embedding=unit_vector(rng),
        )
        for i in range(count)
    ]


async def load(url: str, rows: list[Row]) -> None:
    conn = await asyncpg.connect(url)
    await register_vector(conn)
    try:
        await conn.executemany(
            "INSERT INTO memories (id, tenant_id, content, content_hash, memory_type, tags,"
            " source_repo, created_at, embedding)"
            " VALUES ($1, $2, $3, memory_content_hash($3), $4, $5, $6, $7, $8)",
            [
                (r.id, TENANT, r.content, r.memory_type, r.tags, r.source_repo, r.created_at,
                 r.embedding)
                for r in rows
            ],
        )  # fmt: skip
        await conn.execute("ANALYZE memories")  # on Citus, each shard's own statistics
    finally:
        await conn.close()


@st.composite
def cases(draw: st.DrawFn) -> tuple[MemoryFilter, SearchParams]:
    """A query (known words, sometimes one no memory holds), a side, a term budget that
    makes terms common or not, and a filter."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True))
    maybe = st.none() | st.integers(1, 60)
    days = draw(maybe)
    kept = MemoryFilter(
        source_repo=draw(st.sampled_from(REPOS)),
        include_global=draw(st.booleans()),
        memory_types=draw(
            st.none() | st.lists(st.sampled_from(TYPES), min_size=1, max_size=2, unique=True)
        ),
        tags=draw(st.none() | st.lists(st.sampled_from(TAGS), min_size=1, max_size=1)),
        since=None if days is None else NOW - timedelta(days=days),
    )
    params = SearchParams(
        query=" ".join(words + (["zanzibar"] if draw(st.booleans()) else [])),
        embedding=unit_vector(random.Random(draw(st.integers(0, 2**32 - 1)))),
        alpha=draw(st.sampled_from((0.0, 0.5, 1.0))),
        limit=10,
        candidates=50,
        term_cap=draw(st.sampled_from((3, 200))),  # 3: common terms, which are not read
        decay_weight=0.0,  # the two servers' clocks aside
        strength_days=30,
        track_access=False,
    )
    return kept, params


@pytest.fixture
async def both(
    citus_url: str, database_url: str, scratch_database: Any
) -> AsyncIterator[tuple[Database, Database]]:
    """The same memories on one PostgreSQL and on the Citus cluster (`database_url`: its
    database, migrated), and a Database for each as the service opens it."""
    single_url = await scratch_database("agent_memory_one_search")
    await upgrade_head_async(single_url)
    await reset_tables(citus_url)
    rows = the_rows(random.Random(11), 400)
    await load(single_url, rows)
    await load(citus_url, rows)
    databases = []
    for url, distributed in ((single_url, False), (citus_url, True)):
        pool = await asyncpg.create_pool(
            url, min_size=1, max_size=1, init=lambda c: prepare_session(c, ef_search=100)
        )
        database = Database(pool, transaction_settings=search_settings(100, EXACT_FACTOR))
        database.distributed = distributed
        databases.append(database)
    try:
        yield databases[0], databases[1]
    finally:
        for database in databases:
            await database.pool.close()
        await reset_tables(citus_url)


async def ranked(database: Database, kept: MemoryFilter, params: SearchParams) -> list[Any]:
    async with unit_of_work(database, TENANT) as uow:
        outcome = await SearchRepository(uow).search(kept, params)
    return [(hit.memory.id, round(hit.score, 9)) for hit in outcome.hits]


# Function-scoped `both` is made once for all the examples: they only read (track_access
# is off), so no example changes what the next one sees.
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=cases())
async def test_one_node_and_citus_return_the_same_memories_in_the_same_order(
    both: tuple[Database, Database], case: tuple[MemoryFilter, SearchParams]
) -> None:
    single, citus = both
    kept, params = case
    assert await ranked(citus, kept, params) == await ranked(single, kept, params)


async def test_the_cases_have_memories_to_compare(both: tuple[Database, Database]) -> None:
    """The data is such that a search finds something on both (or the property above could
    hold of empty answers alone)."""
    single, citus = both
    for alpha in (0.0, 0.5, 1.0):
        params = SearchParams("deploy canary", unit_vector(random.Random(1)), alpha, 10, 50,
                              200, 0.0, 30, False)  # fmt: skip
        on_one_node = await ranked(single, MemoryFilter(), params)
        assert len(on_one_node) == 10 and await ranked(citus, MemoryFilter(), params) == on_one_node
