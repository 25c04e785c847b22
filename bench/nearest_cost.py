"""What the near-duplicate check at write costs: this tree's query beside another
revision's, in turn, for the same vectors (stored memories' own, each in its repository).

It runs on the database `bench.store_phases` loaded (the model's vectors, 50 repositories),
so run that first with the same BENCH_DATA_DIR.

    BENCH_DATA_DIR=/tmp/am-phases .venv/bin/python -m bench.nearest_cost [--against HEAD]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import asyncpg
from pgvector import Vector
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.db.pool import prepare_session
from app.repository.memories import _nearest_each
from app.repository.sql import named
from bench.support import as_of, fresh_database

QUERIES = 200


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against", default="8eef394", help="a revision with one statement a memory"
    )
    args = parser.parse_args()
    before = as_of(args.against, "app/repository/memories.py", "_nearest")
    async with fresh_database("agent_memory_bench_phases", reuse=True) as url:
        conn = await asyncpg.connect(url)
        await register_vector(conn)
        rows = await conn.fetch(
            "SELECT embedding, source_repo FROM memories WHERE embedding IS NOT NULL"
            " AND source_repo IS NOT NULL ORDER BY random() LIMIT $1",
            QUERIES,
        )
        model = await conn.fetchval("SELECT name FROM embedding_model")
        # As the service's connections are: its settings, its role (row-level security).
        settings = Settings()
        await prepare_session(
            conn, settings.hnsw_ef_search, vector_exact_factor=settings.vector_exact_factor
        )
        await conn.execute("SELECT set_config('app.tenant_id', 'default', false)")
        one, chunk = "this tree, one memory", "this tree, a chunk of 64 (per memory)"
        took: dict[str, list[float]] = {args.against: [], one: [], chunk: []}
        for row in rows:
            values = {"tenant_id": "default", "embedding": row["embedding"], "nearest": 3,
                      "embedding_model": model, "source_repo": row["source_repo"]}  # fmt: skip
            started = time.perf_counter()
            await conn.fetch(*named(before(False, False), values))
            took[args.against].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await conn.fetch(*named(_nearest_each(False, False, True), values))
            took[one].append((time.perf_counter() - started) * 1000)
        for row in rows[:20]:  # a chunk of 64 of this memory's repository
            part = await conn.fetch(
                "SELECT embedding FROM memories WHERE source_repo = $1 AND embedding IS NOT NULL"
                " ORDER BY random() LIMIT 64",
                row["source_repo"],
            )
            each = {"tenant_id": "default", "nearest": 3, "embedding_model": model,
                    "embeddings": [Vector(r["embedding"].to_list()) for r in part],
                    "source_repo": row["source_repo"]}  # fmt: skip
            started = time.perf_counter()
            await conn.fetch(*named(_nearest_each(False, False, False), each))
            took[chunk].append((time.perf_counter() - started) * 1000 / len(part))
        await conn.close()
    for name, times in took.items():
        print(
            f"{name}: median {statistics.median(times):.2f} ms,"
            f" p90 {statistics.quantiles(times, n=10)[-1]:.2f} ms ({len(times)} statements)"
        )


if __name__ == "__main__":
    asyncio.run(main())
