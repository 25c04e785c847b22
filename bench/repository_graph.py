"""Where a repository's own graph starts to pay (REPOSITORY_GRAPH_ROWS), and what a halfvec
graph would give: on a copy of bench.latency's loaded database (100,000 memories of the
model's vectors, 100 repositories of about 1,000, 100 global memories), some repositories
are merged into larger ones (about 2,000 to 10,000 rows), and each is searched as a hook
searches (the repository with its global memories), through memory_vector_candidates()
under the service's role:

- read whole (the exact read: what a scope within memory_vector_exact_bound() gets, its
  own graph or not), then from its own graph (`agent-memory graphs` builds it);
- each in time (p50, p99) and in the share of the exact top 10 found;
- and each repository's graph again as halfvec (16-bit floats: a partial HNSW index on
  `embedding::halfvec`, queried by a statement of its own, beside the same statement on
  the full graph): its size, its share of the exact top 10, its time.

The copy is dropped after. Run after `bench.latency --sizes 100000 --real-vectors --keep`,
with the same BENCH_DATA_DIR:

    BENCH_DATA_DIR=/tmp/bench-100k .venv/bin/python -m bench.repository_graph [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

import asyncpg
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.db.pool import prepare_session
from app.db.unit_of_work import set_local
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from app.services.graphs import GraphKeeper
from bench.latency import pct
from bench.support import fresh_database
from bench.synthetic import memory_text

COPY = "agent_memory_bench_graphs"
# The merged repositories: each takes this many of the 1% ones, in turn. Every repository
# of at least the smallest's rows gets its own graph for the second path (the rest of the
# 1% ones too, when the smallest is one of them).
SIZES = (1, 2, 3, 5, 10)
CALL = """SELECT id FROM memory_vector_candidates(
    $1::vector, 100, NULL::tsquery, 'default',
    jsonb_populate_record(NULL::memory_filter,
        jsonb_build_object('repo', $2::text, 'with_global', true)))"""
# The exact top 10 of the scope, read from the rows by a statement of its own.
TRUTH = """SELECT m.id FROM memories m
WHERE m.tenant_id = 'default' AND (m.source_repo = $1 OR m.source_repo IS NULL)
  AND m.superseded_by IS NULL AND m.archived_at IS NULL AND m.quarantined_at IS NULL
  AND m.embedding IS NOT NULL
ORDER BY (m.embedding <=> $2) + 0 LIMIT 10"""
# One repository's rows nearest a query, through a graph of its own: the repository named
# as a constant (as memory_vector_candidates() does), so that the partial index is taken.
DIRECT = """SELECT m.id FROM memories m
WHERE m.tenant_id = 'default' AND m.source_repo = '{repo}' AND m.embedding IS NOT NULL
ORDER BY {distance} LIMIT 100"""
FULL = "m.embedding <=> $1::vector"
HALF = "m.embedding::halfvec({dim}) <=> $1::halfvec({dim})"


def merged_name(size: int) -> str:
    return f"merged-{size * 1000}"


async def merge(conn: asyncpg.Connection) -> dict[str, int]:
    """The merged repositories and their rows (the owner's connection)."""
    first = 0
    for size in SIZES:
        parts = [f"repo-{n}" for n in range(first, first + size)]
        first += size
        await conn.execute(
            "UPDATE memories SET source_repo = $1 WHERE source_repo = ANY($2)",
            merged_name(size),
            parts,
        )
    await conn.execute("VACUUM ANALYZE memories")
    rows = await conn.fetch(
        "SELECT source_repo, count(*) AS n FROM memories WHERE source_repo LIKE 'merged-%'"
        " GROUP BY source_repo"
    )
    return {r["source_repo"]: int(r["n"]) for r in rows}


async def timed(
    conn: asyncpg.Connection, sql: str, queries: Sequence[Any], args: Sequence[Any]
) -> tuple[list[float], list[list[Any]]]:
    """Each query's milliseconds and ids, in the service's transaction and settings."""
    times, found = [], []
    for query in queries:
        async with conn.transaction():
            await set_local(conn, {"app.tenant_id": "default", "app.person_id": ""})
            began = time.perf_counter()
            rows = await conn.fetch(sql, query, *args)
            times.append((time.perf_counter() - began) * 1000)
        found.append([r["id"] for r in rows])
    return times, found


def recall(found: list[list[Any]], truths: list[list[Any]]) -> float:
    return statistics.mean(
        len(set(truth) & set(got)) / max(1, len(truth))
        for got, truth in zip(found, truths, strict=True)
    )


def row(label: str, times: list[float], share: float, extra: str = "") -> str:
    return (
        f"| {label} | {statistics.median(times):.1f} | {pct(times, 99):.1f} | {share:.3f} |{extra}"
    )


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    settings = Settings()
    embedder = build_embedder(settings)
    rng = random.Random("graph queries")
    queries = await embedder.embed(
        [memory_text(rng)[0] for _ in range(args.queries)], interactive=True
    )
    await embedder.aclose()
    async with fresh_database("agent_memory_bench_latency", reuse=True) as url:
        base, sep, options = url.partition("?")
        copy_url = f"{base.rsplit('/', 1)[0]}/{COPY}{sep}{options}"
        admin = await asyncpg.connect(url)
        await admin.execute(f'DROP DATABASE IF EXISTS "{COPY}"')
        await admin.execute(f'CREATE DATABASE "{COPY}" TEMPLATE agent_memory_bench_latency')
        await admin.close()
        try:
            await measure(copy_url, settings, queries)
        finally:
            admin = await asyncpg.connect(url)
            await admin.execute(f'DROP DATABASE IF EXISTS "{COPY}" WITH (FORCE)')
            await admin.close()


async def measure(url: str, settings: Settings, queries: list[list[float]]) -> None:
    owner = await asyncpg.connect(url)
    await register_vector(owner)
    sizes = await merge(owner)
    dim = len(queries[0])
    conn = await asyncpg.connect(url)
    await prepare_session(conn, settings.hnsw_ef_search, vector_exact_factor=1e6)
    truths = {repo: [[r["id"] for r in await owner.fetch(TRUTH, repo, q)] for q in queries]
              for repo in sizes}  # fmt: skip
    print("| repository (rows, with 100 global) | path | p50 ms | p99 ms | exact top 10 found |")
    print("|---|---|---|---|---|")
    # Read whole: the exact read, whatever the bound (app.vector_exact_factor 10^6).
    whole = {
        repo: await timed(conn, CALL, queries, [repo])
        for repo in sorted(sizes, key=lambda name: sizes[name])
    }
    plan = await GraphKeeper(owner, min(sizes.values())).keep()
    assert plan is not None
    graph = {repo: await timed(conn, CALL, queries, [repo]) for repo in whole}
    for repo in whole:
        for label, (times, found) in (("read whole", whole[repo]), ("own graph", graph[repo])):
            print(row(f"{sizes[repo]:,} | {label}", times, recall(found, truths[repo])), flush=True)
    print("\nThe repository alone, by a statement of its own (no global memories):\n")
    print("| repository (rows) | graph | p50 ms | p99 ms | exact top 10 found | graph size |")
    print("|---|---|---|---|---|---|")
    for repo in whole:
        alone = [[r["id"] for r in await owner.fetch(TRUTH.replace(
            " OR m.source_repo IS NULL", ""), repo, q)] for q in queries]  # fmt: skip
        full_size = await owner.fetchval(
            "SELECT pg_relation_size(c.oid) FROM pg_class c JOIN pg_index i"
            " ON i.indexrelid = c.oid WHERE c.relname LIKE 'memories_graph_%'"
            " AND pg_get_expr(i.indpred, i.indrelid) LIKE '%' || quote_literal($1) || '%'",
            repo,
        )
        sql = DIRECT.format(repo=repo, distance=FULL)
        times, found = await timed(conn, sql, queries, [])
        print(row(f"{sizes[repo]:,} | full", times, recall(found, alone),
                  f" {full_size / 2**20:.1f} MB |"), flush=True)  # fmt: skip
        half = f"floor_half_{repo.replace('-', '_')}"
        await owner.execute(
            f"CREATE INDEX {half} ON memories USING hnsw"
            f" ((embedding::halfvec({dim})) halfvec_cosine_ops) WITH (m = 16, ef_construction = 64)"
            f" WHERE tenant_id = 'default' AND source_repo = '{repo}'"
        )
        half_size = await owner.fetchval("SELECT pg_relation_size($1::regclass)", half)
        sql = DIRECT.format(repo=repo, distance=HALF.format(dim=dim))
        times, found = await timed(conn, sql, queries, [])
        print(row(f"{sizes[repo]:,} | halfvec", times, recall(found, alone),
                  f" {half_size / 2**20:.1f} MB |"), flush=True)  # fmt: skip
    await conn.close()
    await owner.close()


if __name__ == "__main__":
    asyncio.run(main())
