"""A new connection's first search against its second and third, without repositories'
graphs, with them, and without again, on bench.latency's loaded database: what a pooled
connection pays once, after each time asyncpg closed it for idling (what its backend has
not loaded yet; this does not take that apart).

Run after `bench.latency --sizes 1000000 --real-vectors --keep`, with the same
BENCH_DATA_DIR (it leaves the database without graphs):

    BENCH_DATA_DIR=/tmp/bench-1m .venv/bin/python -m bench.first_search [--connections 8]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

import asyncpg

from app.config import Settings
from app.db.pool import prepare_session
from app.db.unit_of_work import quote_literal
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from bench.latency import repository_graphs
from bench.support import fresh_database
from bench.synthetic import memory_text

TENANT = "default"
# The vector side of a tenant-wide search, as the search statement calls it.
CANDIDATES = """
SELECT id FROM memory_vector_candidates(
    $1::vector, 100, NULL::tsquery, $2, jsonb_populate_record(NULL::memory_filter, '{}'::jsonb))
"""
SEARCHES = 3  # on each connection: its first, second and third


async def on_new_connections(
    url: str, settings: Settings, queries: list[list[float]], connections: int
) -> list[list[float]]:
    """Each connection's searches (ms, in order), each connection new, set up as the
    service's pool sets its own up."""
    times = []
    for n in range(connections):
        conn = await asyncpg.connect(url)
        try:
            await prepare_session(
                conn, settings.hnsw_ef_search, vector_exact_factor=settings.vector_exact_factor
            )
            taken = []
            for k in range(SEARCHES):
                async with conn.transaction():
                    await conn.execute(f"SET LOCAL app.tenant_id = {quote_literal(TENANT)}")
                    began = time.perf_counter()
                    await conn.fetch(CANDIDATES, queries[n * SEARCHES + k], TENANT)
                    taken.append((time.perf_counter() - began) * 1000)
            times.append(taken)
        finally:
            await conn.close()
    return times


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings = Settings()
    embedder = build_embedder(settings)
    rng = random.Random("first searches")
    per_round = args.connections * SEARCHES
    texts = [memory_text(rng)[0] for _ in range(per_round * args.rounds * 3 + per_round)]
    queries = await embedder.embed(texts, interactive=True)
    await embedder.aclose()
    async with fresh_database("agent_memory_bench_latency", reuse=True) as url:
        print("| graphs | round | first ms | second ms | third ms |")
        print("|---|---|---|---|---|")
        used = 0
        for label, graphs in (("none", False), ("each repository's", True), ("none", False)):
            print(f"<!-- {await repository_graphs(url, graphs)} -->", flush=True)
            # Unmeasured: the database's own first reads after the graphs changed.
            await on_new_connections(url, settings, queries[:per_round], args.connections)
            for n in range(args.rounds):
                used += per_round
                batch = queries[used : used + per_round]
                times = await on_new_connections(url, settings, batch, args.connections)
                medians = [statistics.median(t[k] for t in times) for k in range(SEARCHES)]
                cells = " | ".join(f"{m:.1f}" for m in medians)
                print(f"| {label} | {n + 1} | {cells} |", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
