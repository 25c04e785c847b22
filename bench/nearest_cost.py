"""What the near-duplicate check at write costs: this tree's query beside another
revision's, in turn, for the same vectors (stored memories' own, each in its repository).

It runs on the database `bench.store_phases` loaded (the model's vectors, 50 repositories
of 2,000 rows), so run that first with the same BENCH_DATA_DIR; or with --database on
`bench.latency`'s (100 repositories of 1% of the rows: at 100,000, within the check's exact
bound). Against a revision with one statement a chunk, its chunks are timed too.

    BENCH_DATA_DIR=/tmp/am-phases .venv/bin/python -m bench.nearest_cost [--against HEAD]
    BENCH_DATA_DIR=/tmp/am-bench .venv/bin/python -m bench.nearest_cost --against HEAD \
        --database agent_memory_bench_latency
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import asyncpg
from pgvector import Vector
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.db.pool import prepare_session
from app.repository.nearest import near_duplicates
from app.repository.sql import named
from bench.support import as_of, fresh_database

QUERIES = 200


def this_tree(one: bool, values: dict[str, Any]) -> tuple[Any, ...]:
    """This tree's statement for new memories of `values`' repository, bound."""
    statement, scope = near_duplicates(values["source_repo"], False, one)
    return named(statement, {**values, **scope})


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against", default="8eef394", help="a revision with one statement a memory"
    )
    parser.add_argument("--database", default="agent_memory_bench_phases")
    args = parser.parse_args()
    try:
        before_each = as_of(args.against, "app/repository/memories.py", "_nearest_each")
    except AttributeError:  # one statement a memory
        before_each = None
        before_one = as_of(args.against, "app/repository/memories.py", "_nearest")
    else:

        def before_one(distributed: bool, global_: bool) -> str:
            return str(before_each(distributed, global_, True))

    async with fresh_database(args.database, reuse=True) as url:
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
        their_chunk = f"{args.against}, a chunk of 64 (per memory)"
        took: dict[str, list[float]] = {args.against: [], one: [], chunk: [], their_chunk: []}
        for row in rows:
            values = {"tenant_id": "default", "embedding": row["embedding"], "nearest": 3,
                      "embedding_model": model, "source_repo": row["source_repo"]}  # fmt: skip
            started = time.perf_counter()
            await conn.fetch(*named(before_one(False, False), values))
            took[args.against].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await conn.fetch(*this_tree(True, values))
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
            await conn.fetch(*this_tree(False, each))
            took[chunk].append((time.perf_counter() - started) * 1000 / len(part))
            if before_each is not None:
                started = time.perf_counter()
                await conn.fetch(*named(before_each(False, False, False), each))
                took[their_chunk].append((time.perf_counter() - started) * 1000 / len(part))
        await conn.close()
    for name, times in took.items():
        if not times:
            continue
        print(
            f"{name}: median {statistics.median(times):.2f} ms,"
            f" p90 {statistics.quantiles(times, n=10)[-1]:.2f} ms ({len(times)} statements)"
        )


if __name__ == "__main__":
    asyncio.run(main())
