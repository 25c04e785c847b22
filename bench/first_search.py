"""A new pooled connection's first search against its second and third, through the
service's pool and its unit of work, without and with the pool's warm-up (app/db/pool.py,
alternated: without, with, with, without), on bench.latency's loaded database. Each round
opens a pool of one connection, as the service opens one at its start or when requests
outgrow the open ones, and times that too: the warm-up moves the first search's extra
cost there, before any request. First, which connection a request gets after a pause
(asyncpg closes an idle connection past its lifetime).

The searches are the hooks' most frequent: a recall on a prompt (a repository with its
global memories, the session's own held ones), three on each connection; the query vectors
are the model's, embedded first, so that only the database's part is timed (BEGIN to
COMMIT, as a request runs it).

Run after `bench.latency --sizes 100000 --real-vectors --keep`, with the same
BENCH_DATA_DIR:

    BENCH_DATA_DIR=/tmp/bench-100k .venv/bin/python -m bench.first_search [--rounds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
import uuid

import asyncpg

from app.config import Settings, limits_of
from app.db.pool import create_pool
from app.db.unit_of_work import Database, unit_of_work
from app.domain.inputs.search import search_query
from app.domain.recall import RecallRequest, recall_query
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from app.repository.search import SearchRepository
from app.services.search import connection_warm_up, statement_params
from bench.latency import pct
from bench.support import fresh_database
from bench.synthetic import QUERIES

TENANT = "default"
SEARCHES = 3  # on each connection: its first, second and third
VARIANTS = (("without", False), ("with", True), ("with", True), ("without", False))


async def one_connection(
    url: str, settings: Settings, model: str, warm: bool, searches: list[tuple[str, list[float]]]
) -> tuple[float, list[float]]:
    """A pool of one new connection (opened and set up as the service's: ms), then its
    searches (ms each)."""
    began = time.perf_counter()
    pool = await create_pool(
        url, 1, 1, 30, settings.hnsw_ef_search, settings.db_app_role or None,
        settings.vector_exact_factor,
        warm_up=connection_warm_up(settings, model, len(searches[0][1])) if warm else None,
    )  # fmt: skip
    opened = (time.perf_counter() - began) * 1000
    database = Database(pool, 30)
    database.embedding_model = model
    limits = limits_of(settings)
    taken = []
    try:
        session = uuid.uuid4()
        for text, vector in searches:
            repo = f"repo-{random.Random(text).randrange(100)}"
            draft = recall_query(RecallRequest(text, repo, "prompt", session_id=session)).search
            query = search_query(draft, limits)
            params = statement_params(settings, query, vector, settings.hybrid_alpha)
            began = time.perf_counter()
            async with unit_of_work(database, TENANT) as uow:
                await SearchRepository(uow).search(query.filter, params, 0)
            taken.append((time.perf_counter() - began) * 1000)
    finally:
        await pool.close()
    return opened, taken


async def after_a_pause(url: str) -> str:
    """Which connection a request gets after a pause: a pool of 2 to 10 grown by five
    requests at once, then idle past its connections' idle lifetime (1 s here; asyncpg's
    default, which the service keeps, is 300 s)."""
    pool = await asyncpg.create_pool(
        url, min_size=2, max_size=10, max_inactive_connection_lifetime=1.0
    )

    async def backend(hold_s: float) -> int:
        async with pool.acquire() as conn:
            await asyncio.sleep(hold_s)  # five at once: the pool grows to five
            return int(conn.get_server_pid())

    try:
        await asyncio.gather(*(backend(0.3) for _ in range(5)))
        last = await backend(0)
        grown = pool.get_size()
        await asyncio.sleep(2.5)
        kept = pool.get_size()
        after = await backend(0)
    finally:
        await pool.close()
    same = "the same, warm" if after == last else "another one"
    return (
        f"after a pause: the pool grew to {grown} connections and kept {kept}; the next"
        f" request got {same} connection as the request before the pause"
    )


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="new connections per variant")
    args = parser.parse_args()
    settings = Settings()
    embedder = build_embedder(settings)
    count = args.rounds * len(VARIANTS) * SEARCHES
    texts = [QUERIES[i % len(QUERIES)] for i in range(count)]
    vectors = await embedder.embed(texts, interactive=True)
    await embedder.aclose()
    pairs = list(zip(texts, vectors, strict=True))
    async with fresh_database("agent_memory_bench_latency", reuse=True) as url:
        conn = await asyncpg.connect(url)
        model = str(await conn.fetchval("SELECT name FROM embedding_model"))
        await conn.close()
        print(await after_a_pause(url), flush=True)
        print("| warm-up | run | opening ms | first ms | second ms | third ms | first - second |")
        print("|---|---|---|---|---|---|---|")
        used = 0
        for run, (label, warm) in enumerate(VARIANTS, start=1):
            opened, times = [], []
            for _ in range(args.rounds):
                searches = pairs[used : used + SEARCHES]
                used += SEARCHES
                took = await one_connection(url, settings, model, warm, searches)
                opened.append(took[0])
                times.append(took[1])
            medians = [statistics.median(t[k] for t in times) for k in range(SEARCHES)]
            excess = [t[0] - t[1] for t in times]
            print(
                f"| {label} | {run} | {statistics.median(opened):.1f} | "
                + " | ".join(f"{m:.1f}" for m in medians)
                + f" | median {statistics.median(excess):.1f}, max {pct(excess, 100):.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    asyncio.run(main())
