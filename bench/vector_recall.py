"""What the HNSW settings cost in recall and buy in time, at 100k memories with real vectors.

bench.latency loads hash-provider vectors (fast, but meaningless to a real query), so it
can time the vector side but not judge it. Here every memory is embedded by the default
model, and for queries written like the memories (another draw of bench/synthetic.py),
the exact nearest neighbours (a sequential scan) are compared with what the HNSW index
returns at each `hnsw.ef_search` and candidate count: the share of the exact top 10
among the candidates the search's vector side would hand to the fusion, unfiltered and
filtered to one repository (1% of the rows), with the statement's median time.

    BENCH_DATA_DIR=/tmp/bench-vr .venv/bin/python -m bench.vector_recall   # ~6 min the first time
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from typing import Any

import asyncpg
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from bench.latency import bulk_load
from bench.support import fresh_database
from bench.synthetic import memory_text

SIZE = 100_000
REPOS = 100
QUERIES = 200
SETTINGS = [(40, 100), (100, 100), (100, 200), (200, 200)]  # (ef_search, candidates)

_NEAREST = """
SELECT id FROM memories
WHERE embedding IS NOT NULL AND ($2::text IS NULL OR source_repo = $2)
ORDER BY embedding <=> $1 LIMIT $3
"""


async def nearest(
    conn: Any, query: list[float], repo: str | None, limit: int, exact: bool, ef: int
) -> tuple[list[Any], float]:
    async with conn.transaction():
        if exact:
            await conn.execute("SET LOCAL enable_indexscan = off")
        await conn.execute(
            f"SET LOCAL hnsw.ef_search = {int(ef)}; SET LOCAL hnsw.iterative_scan = relaxed_order"
        )
        began = time.perf_counter()
        rows = await conn.fetch(_NEAREST, query, repo, limit)
        took = (time.perf_counter() - began) * 1000
    return [r["id"] for r in rows], took


async def main() -> None:
    configure_logging("WARNING")
    embedder = build_embedder(Settings())
    async with fresh_database("agent_memory_bench_vector_recall", reuse=True) as url:
        conn = await asyncpg.connect(url)
        await register_vector(conn)
        try:
            if not await conn.fetchval("SELECT count(*) FROM memories"):
                took, built = await bulk_load(url, 0, SIZE, REPOS, embedder=embedder)
                print(
                    f"loaded {SIZE} memories with real vectors in {took:.0f}s (HNSW {built:.0f}s)"
                )
            rng = random.Random("queries")
            texts = [memory_text(rng)[0] for _ in range(QUERIES)]
            queries = await embedder.embed(texts, interactive=True)
            results: dict[tuple[str, int, int], list[float]] = {}
            times: dict[tuple[str, int, int], list[float]] = {}
            for i, query in enumerate(queries):
                repo = f"repo-{i % REPOS}" if i % 2 else None
                scope = "one repository (1%)" if repo else "all rows"
                truth, _ = await nearest(conn, query, repo, 10, exact=True, ef=40)
                for ef, candidates in SETTINGS:
                    found, took = await nearest(conn, query, repo, candidates, False, ef)
                    key = (scope, ef, candidates)
                    results.setdefault(key, []).append(len(set(truth) & set(found)) / len(truth))
                    times.setdefault(key, []).append(took)
        finally:
            await conn.close()
    await embedder.aclose()
    print(f"\n{SIZE:,} memories, {QUERIES} queries (half filtered to one repository)\n")
    print("| scope | ef_search | candidates | exact top 10 among the candidates | median ms |")
    print("|---|---|---|---|---|")
    for (scope, ef, candidates), shares in results.items():
        print(
            f"| {scope} | {ef} | {candidates} | {statistics.mean(shares):.3f}"
            f" | {statistics.median(times[(scope, ef, candidates)]):.2f} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
