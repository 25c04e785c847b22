"""Random unit vectors stored as memories, the exact nearest of them, the factor that bounds
an exact read at a number of rows, and how often the HNSW graph was read."""

from __future__ import annotations

import math
import random

import asyncpg

HNSW_SCANS = """
SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'memories_embedding_hnsw'
"""


def unit(rng: random.Random) -> list[float]:
    vector = [rng.gauss(0, 1) for _ in range(384)]
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


async def insert_units(
    db: asyncpg.Connection, tenant: str, repo: str | None, names: str, seed: int
) -> dict[str, list[float]]:
    """40 memories of `tenant` and `repo` with random unit vectors, by content, ANALYZEd:
    the bound reads the graph's size from ANALYZE's count."""
    rng = random.Random(seed)
    rows = {f"{names} {i}": unit(rng) for i in range(40)}
    await db.executemany(
        "INSERT INTO memories (tenant_id, source_repo, content, content_hash, embedding)"
        " VALUES ($1, $2, $3, memory_content_hash($3), $4)",
        [(tenant, repo, content, vector) for content, vector in rows.items()],
    )
    await db.execute("ANALYZE memories")
    return rows


async def factor_for_bound(db: asyncpg.Connection, bound: int) -> float:
    """The factor that bounds an exact read at `bound` rows on the graph as it stands."""
    graph_rows = await db.fetchval("SELECT reltuples FROM pg_class WHERE relname = 'memories'")
    return float((bound + 0.5) ** 2 / graph_rows)


async def hnsw_scans(db: asyncpg.Connection) -> int:
    await db.execute("SELECT pg_stat_force_next_flush()")
    await db.execute("SELECT pg_stat_clear_snapshot()")
    return int(await db.fetchval(HNSW_SCANS) or 0)


def exact_top(rows: dict[str, list[float]], query: list[float]) -> list[str]:
    return sorted(rows, key=lambda c: -sum(a * b for a, b in zip(rows[c], query, strict=True)))[:10]
