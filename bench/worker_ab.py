"""Two revisions' search statements on one Citus cluster, side by side: the call each sends
to the tenant's worker (memory_search_on_worker()), timed in turn on one connection, so
that the cluster, its data, its caches and the machine's drift are the same for both.
What differs is only the statement text each revision writes.

    # a cluster with bench.scale_out's data (10,000 memories over 100 tenants), left running
    .venv/bin/python -m bench.worker_ab cluster
    # each revision writes its calls (run from its own tree; this file is read, not imported)
    git worktree add /tmp/before <rev>
    (cd /tmp/before && PYTHONPATH=. /work/main/.venv/bin/python /work/main/bench/worker_ab.py \
        calls /tmp/before.json)
    .venv/bin/python -m bench.worker_ab calls /tmp/after.json
    .venv/bin/python -m bench.worker_ab compare /tmp/before.json /tmp/after.json
    CITUS_DATA=/tmp/agent-memory-citus-bench CITUS_PORT=9800 scripts/citus stop

The calls are the hybrid searches of bench.scale_out (a third filtered to one repository),
as a random tenant, without counting reads. A revision's statement must run on the
cluster's schema (the newest): the searches here use no tag filter, whose helper changed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

import asyncpg

COORDINATOR = "postgresql://postgres@127.0.0.1:9800/agent_memory"
TENANTS = 100
REPOS = 10


async def worker_calls(n: int) -> list[dict[str, Any]]:
    """The worker calls this tree's code writes for n searches."""
    from app.config import Settings
    from app.domain.filters import MemoryFilter
    from app.embeddings.hashing import HashEmbedder
    from app.repository.search_statement import SearchParams, search_statement
    from app.repository.sql import named
    from bench.synthetic import QUERIES

    settings = Settings()
    embedder = HashEmbedder(384)
    rng = random.Random(7)
    calls = []
    for i in range(n):
        query = QUERIES[i % len(QUERIES)]
        tenant = f"tenant-{rng.randrange(TENANTS)}"
        scope = MemoryFilter(source_repo=f"repo-{rng.randrange(REPOS)}") if i % 3 == 0 else None
        params = SearchParams(
            query=query,
            embedding=[float(x) for x in (await embedder.embed([query]))[0]],
            alpha=0.6,
            limit=10,
            candidates=settings.search_candidates,
            term_cap=settings.keyword_term_cap,
            decay_weight=settings.decay_weight,
            strength_days=settings.decay_strength_days,
            track_access=False,
            branch_boost=settings.branch_boost,
        )
        statement = search_statement(tenant, scope or MemoryFilter(), params, True, None)
        sql, *args = named(*statement.worker_call())
        calls.append({"tenant": tenant, "filtered": scope is not None, "sql": sql, "args": args})
    return calls


async def start_cluster() -> None:
    # Imported here: `calls` runs this file against another revision's tree.
    from app.db.migrations import upgrade_head_async
    from bench.latency import bulk_load
    from bench.scale_out import citus

    citus("start", "2")
    url = citus("url")
    await upgrade_head_async(url)
    took, _ = await bulk_load(url, 0, 10_000, REPOS, TENANTS)
    print(f"{url}: 10,000 memories over {TENANTS} tenants loaded in {took:.0f}s")


async def compare(sides: dict[str, list[dict[str, Any]]], url: str, rounds: int) -> None:
    paths = list(sides)
    conn = await asyncpg.connect(url)
    # As the service sends it: the tenant set locally, forwarded to the worker.
    await conn.execute("SET citus.propagate_set_commands = 'local'")
    took: dict[tuple[str, bool], list[float]] = {}
    count = min(len(calls) for calls in sides.values())
    try:
        for round_ in range(rounds + 1):  # round 0 warms up: each statement is prepared
            for i in range(count):
                order = paths if (i + round_) % 2 else paths[::-1]
                for path in order:
                    call: dict[str, Any] = sides[path][i]
                    async with conn.transaction():
                        await conn.execute(f"SET LOCAL app.tenant_id = '{call['tenant']}'")
                        began = time.perf_counter()
                        await conn.fetchval(call["sql"], *call["args"])
                        elapsed = (time.perf_counter() - began) * 1000
                    if round_:
                        took.setdefault((path, call["filtered"]), []).append(elapsed)
    finally:
        await conn.close()
    print("| statements | searches | p50 ms | p90 | mean |")
    print("|---|---|---|---|---|")
    for path in paths:
        for label, keys in (
            ("all", [(path, False), (path, True)]),
            ("one repository", [(path, True)]),
        ):
            values = sorted(v for key in keys for v in took.get(key, []))
            print(
                f"| {path} | {label} ({len(values)}) | {values[len(values) // 2]:.2f}"
                f" | {values[int(len(values) * 0.9)]:.2f} | {statistics.mean(values):.2f} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("cluster", help="start the cluster and load it")
    calls = commands.add_parser("calls", help="write this tree's worker calls")
    calls.add_argument("out")
    calls.add_argument("--searches", type=int, default=60)
    versus = commands.add_parser("compare", help="time two revisions' calls in turn")
    versus.add_argument("paths", nargs=2)
    versus.add_argument("--url", default=COORDINATOR)
    versus.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.command == "cluster":
        asyncio.run(start_cluster())
    elif args.command == "calls":
        Path(args.out).write_text(json.dumps(asyncio.run(worker_calls(args.searches))))
    else:
        sides = {path: json.loads(Path(path).read_text()) for path in args.paths}
        asyncio.run(compare(sides, args.url, args.rounds))


if __name__ == "__main__":
    main()
