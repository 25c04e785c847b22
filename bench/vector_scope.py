"""The vector side by the size of the search's scope (a repository, or a tag), on
bench.latency's loaded database: the HNSW graph (iterative scan) against the exact read of
the scope, in time and in the share of the exact top 10 found, and the plan each takes.

Run after `bench.latency --sizes 1000000 --real-vectors --keep`, with the same
BENCH_DATA_DIR:

    BENCH_DATA_DIR=/tmp/bench-1m .venv/bin/python -m bench.vector_scope [--queries 100]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from pathlib import Path
from typing import Any

import asyncpg
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from bench.latency import RARE_REPO, pct
from bench.support import fresh_database
from bench.synthetic import memory_text

# A scope: a repository, or a tag (tagged here on first use, as bench.latency loads none).
TAGS = {"tag-1pct": 100, "tag-rare": 1000}  # a tag on one row in this many
Scope = tuple[str | None, list[str] | None]  # a repository, tags
SCOPES: dict[str, Scope] = {
    "all rows": (None, None),
    "a 1% repository": ("repo-7", None),
    "a 0.1% repository": (RARE_REPO, None),
    "a 1% tag": (None, ["tag-1pct"]),
    "a 0.1% tag": (None, ["tag-rare"]),
}
CALL = """SELECT id FROM memory_vector_candidates(
    $1::vector, $2, NULL::tsquery, 'default',
    jsonb_populate_record(NULL::memory_filter,
        jsonb_build_object('repo', $3::text, 'tags', $4::text[], 'with_global', false)))"""
ROWS = """SELECT count(*) FROM memories m
WHERE ($1::text IS NULL OR m.source_repo = $1) AND ($2::text[] IS NULL OR m.tags @> $2)"""
# The statement the function runs for a scope, for EXPLAIN.
INNER = """SELECT m.id FROM public.memories m
WHERE m.tenant_id = 'default' AND m.superseded_by IS NULL AND m.archived_at IS NULL
  AND ($2::text IS NULL OR m.source_repo = $2) AND ($3::text[] IS NULL OR m.tags @> $3)
  AND m.embedding IS NOT NULL
ORDER BY {order} LIMIT 100"""


async def candidates(
    conn: Any,
    query: Any,
    scope: Scope,
    exact_factor: float,
    limit: int = 100,
) -> tuple[list[Any], float]:
    async with conn.transaction():
        await conn.execute(f"SET LOCAL app.vector_exact_factor = {float(exact_factor)}")
        began = time.perf_counter()
        rows = await conn.fetch(CALL, query, limit, *scope)
        took = (time.perf_counter() - began) * 1000
    return [r["id"] for r in rows], took


async def explain(conn: Any, query: Any, scope: Scope, exact: bool) -> str:
    order = "(m.embedding <=> $1) + 0" if exact else "m.embedding <=> $1"
    async with conn.transaction():
        rows = await conn.fetch(
            "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + INNER.format(order=order), query, *scope
        )
    return "\n".join(r[0] for r in rows)


async def tag_rows(conn: Any) -> None:
    """Each tag on one row in TAGS[tag], spread over the repositories, once."""
    tagged = False
    for tag, every in TAGS.items():
        if not await conn.fetchval("SELECT 1 FROM memories WHERE tags @> $1 LIMIT 1", [tag]):
            await conn.execute(
                "UPDATE memories SET tags = tags || $1"
                " WHERE abs(hashtext(id::text || $2)) % $3 = 0",
                [tag],
                tag,
                every,
            )
            tagged = True
    if tagged:
        await conn.execute("VACUUM ANALYZE memories")


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--function",
        type=Path,
        help="a variant of memory_vector_candidates() to install in the bench database first",
    )
    args = parser.parse_args()
    settings = Settings()
    embedder = build_embedder(settings)
    rng = random.Random("scope queries")
    texts = [memory_text(rng)[0] for _ in range(args.queries)]
    queries = await embedder.embed(texts, interactive=True)
    await embedder.aclose()
    async with fresh_database("agent_memory_bench_latency", reuse=True) as url:
        conn = await asyncpg.connect(url)
        await register_vector(conn)
        await conn.execute(f"SET hnsw.ef_search = {settings.hnsw_ef_search}")
        await conn.execute("SET hnsw.iterative_scan = relaxed_order")
        if args.function:
            await conn.execute(args.function.read_text())
        try:
            print("| scope | rows | path | p50 ms | p99 ms | exact top 10 found |")
            print("|---|---|---|---|---|---|")
            await tag_rows(conn)
            for label, scope in SCOPES.items():
                rows = await conn.fetchval(ROWS, *scope)
                truths = [(await candidates(conn, q, scope, 10**9, 10))[0] for q in queries]
                paths = [("HNSW", 0), ("chosen", settings.vector_exact_factor)]
                if scope != (None, None):  # the whole table read exactly is no contender
                    paths.insert(1, ("exact", 10**9))
                for path, exact_factor in paths:
                    times, found = [], []
                    for query, truth in zip(queries, truths, strict=True):
                        got, took = await candidates(conn, query, scope, exact_factor)
                        times.append(took)
                        found.append(len(set(truth) & set(got)) / max(1, len(truth)))
                    print(
                        f"| {label} | {rows:,} | {path} | {statistics.median(times):.1f} |"
                        f" {pct(times, 99):.1f} | {statistics.mean(found):.3f} |",
                        flush=True,
                    )
            for label, scope in SCOPES.items():
                for exact in (False, True):
                    plan = await explain(conn, queries[0], scope, exact)
                    form = "exact" if exact else "HNSW"
                    print(f"\n{label}, {form} form:\n```\n{plan}\n```", flush=True)
        finally:
            await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
