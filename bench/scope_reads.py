"""What migration 0045's row policy cost a repository's reads, and what migration 0049 gave
back: the same statements, under the service's role, on bench.latency's loaded database at
three schema revisions in turn (head, 0048, 0044, 0044, 0048, head):

- 0044: the policy names the tenant only;
- 0048: it also reads each row's personal_to (migration 0045), which the scope indexes do
  not hold, so that their index-only reads take a page of the table for each row;
- head (0049 and after): the scope indexes hold personal_to.

The statements are the same text at every revision: a repository's count (what a search
sizes its scope by) and the search's vector side for a repository with its global memories
(memory_vector_candidates(), whose text is migration 0043's at all three), each on the
model's queries. Run after `bench.latency --sizes 100000 --real-vectors --keep`, with the
same BENCH_DATA_DIR (it leaves the database at this tree's head):

    BENCH_DATA_DIR=/tmp/bench-100k .venv/bin/python -m bench.scope_reads [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

import asyncpg
from alembic import command

from app.config import Settings
from app.db.migrations import alembic_config, current_revision, downgrade, upgrade_head_async
from app.db.pool import prepare_session
from app.db.unit_of_work import set_local
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from bench.latency import pct
from bench.support import fresh_database
from bench.synthetic import QUERIES

REVISIONS = ("head", "0048", "0044", "0044", "0048", "head")
COUNT = """SELECT count(*) FROM (
    SELECT 1 FROM memories m
    WHERE m.tenant_id = 'default' AND m.source_repo = $1
      AND m.superseded_by IS NULL AND m.archived_at IS NULL
    LIMIT 7072) scope_rows"""
CANDIDATES = """SELECT id FROM memory_vector_candidates(
    $1::vector, 100, NULL::tsquery, 'default',
    jsonb_populate_record(NULL::memory_filter,
        jsonb_build_object('repo', $2::text, 'with_global', true)))"""


async def at(url: str, revision: str) -> None:
    """The schema at `revision` (up or down), then vacuumed: a migration that rewrote the
    table leaves no page marked all-visible, and an index-only read then visits each."""
    conn = await asyncpg.connect(url)
    try:
        now = await current_revision(conn)
    finally:
        await conn.close()
    if revision == "head":
        await upgrade_head_async(url)
    elif now is not None and now < revision:
        await asyncio.to_thread(command.upgrade, alembic_config(url), revision)
    elif now != revision:
        await asyncio.to_thread(downgrade, url, revision)
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("VACUUM ANALYZE memories")
    finally:
        await conn.close()


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    settings = Settings()
    embedder = build_embedder(settings)
    texts = [QUERIES[i % len(QUERIES)] for i in range(args.queries)]
    vectors = await embedder.embed(texts, interactive=True)
    await embedder.aclose()
    rng = random.Random("scope reads")
    repos = [f"repo-{rng.randrange(100)}" for _ in vectors]
    async with fresh_database("agent_memory_bench_latency", reuse=True) as url:
        print("| schema | a repository's count p50 / p99 ms | its vector side p50 / p99 ms |")
        print("|---|---|---|")
        try:
            for revision in REVISIONS:
                await at(url, revision)
                conn = await asyncpg.connect(url)
                try:
                    await prepare_session(
                        conn, settings.hnsw_ef_search,
                        vector_exact_factor=settings.vector_exact_factor,
                    )  # fmt: skip
                    took: dict[str, list[float]] = {"count": [], "vector": []}
                    for vector, repo in zip(vectors, repos, strict=True):
                        for name, sql, values in (
                            ("count", COUNT, [repo]),
                            ("vector", CANDIDATES, [vector, repo]),
                        ):
                            async with conn.transaction():
                                await set_local(conn, {"app.tenant_id": "default"})
                                began = time.perf_counter()
                                await conn.fetch(sql, *values)
                                took[name].append((time.perf_counter() - began) * 1000)
                finally:
                    await conn.close()
                cells = " | ".join(
                    f"{statistics.median(t):.2f} / {pct(t, 99):.2f}" for t in took.values()
                )
                print(f"| {revision} | {cells} |", flush=True)
        finally:
            await upgrade_head_async(url)


if __name__ == "__main__":
    asyncio.run(main())
