"""The vector side by the size of the search's scope (a repository, with or without the
global memories, or a tag), on bench.latency's loaded database: the HNSW graph (iterative
scan) against the exact read of the scope, in time and in the share of the exact top 10
found (the truth read from the rows, apart from the function), and the plan each takes.

Run after `bench.latency --sizes 1000000 --real-vectors --keep`, with the same
BENCH_DATA_DIR:

    BENCH_DATA_DIR=/tmp/bench-1m .venv/bin/python -m bench.vector_scope [--queries 100]

With --graphs, each repository of REPOSITORY_GRAPH_ROWS memories has its own graph first
(`agent-memory graphs`), which every path then takes for it; without, none has.
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
from bench.latency import RARE_REPO, pct, repository_graphs
from bench.support import fresh_database
from bench.synthetic import memory_text

# A scope: a repository, or a tag (tagged here on first use, as bench.latency loads none).
TAGS = {"tag-1pct": 100, "tag-rare": 1000}  # a tag on one row in this many
Scope = tuple[str | None, list[str] | None, bool]  # a repository, tags, with the global rows
# A repository holds 1% of the rows as bench.latency loads them by default (its --repos).
SCOPES: dict[str, Scope] = {
    "all rows": (None, None, False),
    "a repository": ("repo-7", None, False),
    "a repository and the global rows (as hooks search)": ("repo-7", None, True),
    "the 0.1% repository": (RARE_REPO, None, False),
    "a 1% tag": (None, ["tag-1pct"], False),
    "a 0.1% tag": (None, ["tag-rare"], False),
}
CALL = """SELECT id FROM memory_vector_candidates(
    $1::vector, $2, NULL::tsquery, 'default',
    jsonb_populate_record(NULL::memory_filter,
        jsonb_build_object('repo', $3::text, 'tags', $4::text[], 'with_global', $5::boolean)))"""
IN_SCOPE = """m.tenant_id = 'default' AND m.superseded_by IS NULL AND m.archived_at IS NULL
  AND ($1::text IS NULL OR m.source_repo = $1 OR ($3 AND m.source_repo IS NULL))
  AND ($2::text[] IS NULL OR m.tags @> $2)"""
ROWS = f"SELECT count(*) FROM memories m WHERE {IN_SCOPE}"
# The exact top 10, read from the rows by a statement of its own (not the function's).
TRUTH = f"""SELECT m.id FROM memories m
WHERE {IN_SCOPE} AND m.quarantined_at IS NULL AND m.embedding IS NOT NULL
ORDER BY (m.embedding <=> $4) + 0 LIMIT 10"""


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


async def explain(conn: Any, query: Any, scope: Scope, exact_factor: float) -> str:
    """The plans of the statements the function runs for this scope (auto_explain, with
    ANALYZE and BUFFERS), as the server's log would show them."""
    notes: list[str] = []

    def note(_: Any, message: Any) -> None:
        notes.append(message.message)

    conn.add_log_listener(note)
    try:
        async with conn.transaction():
            await conn.execute("LOAD 'auto_explain'")
            for setting in (
                "auto_explain.log_min_duration = 0",
                "auto_explain.log_nested_statements = on",
                "auto_explain.log_analyze = on",
                "auto_explain.log_buffers = on",
                "client_min_messages = log",
                f"app.vector_exact_factor = {float(exact_factor)}",
            ):
                await conn.execute(f"SET LOCAL {setting}")
            await conn.fetch(CALL, query, 100, *scope)
        await asyncio.sleep(0)  # the log messages' callbacks, queued before the result
    finally:
        conn.remove_log_listener(note)
    return "\n\n".join(n for n in notes if " on memories" in n)


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
    parser.add_argument(
        "--graphs", action="store_true", help="with repositories' own graphs (else none)"
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
        print(await repository_graphs(url, args.graphs), flush=True)
        try:
            print("| scope | rows | path | p50 ms | p99 ms | exact top 10 found |")
            print("|---|---|---|---|---|---|")
            await tag_rows(conn)
            for label, scope in SCOPES.items():
                rows = await conn.fetchval(ROWS, *scope)
                truths = [[r["id"] for r in await conn.fetch(TRUTH, *scope, q)] for q in queries]
                paths = [("HNSW", 0), ("chosen", settings.vector_exact_factor)]
                if scope[:2] != (None, None):  # the whole table read exactly is no contender
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
                for path, exact_factor in (("HNSW", 0), ("chosen", settings.vector_exact_factor)):
                    plan = await explain(conn, queries[0], scope, exact_factor)
                    print(f"\n{label}, {path}:\n```\n{plan}\n```", flush=True)
        finally:
            await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
