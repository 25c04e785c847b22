"""Where a search's time goes on a local Citus cluster: each statement of the search's
transaction, by node and by phase (parse, bind: where a statement with parameters is
planned, execute), from the servers' own logs (`log_min_duration_statement = 0`).

A fresh cluster (bench/scale_out.py's, on port 9800) gets `--memories` synthetic rows over
`--tenants` tenants; the service answers `--queries` hybrid searches as a random tenant's
key, as bench/scale_out.py sends them. Each
node's figures are its summed durations divided by the number of searches, so the two
workers' lines add up to what one search costs on the worker that holds its tenant.

    .venv/bin/python -m bench.citus_statements [--memories 10000] [--tenants 100]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
from collections import defaultdict
from pathlib import Path

import asyncpg

from bench.latency import bulk_load, pct
from bench.scale_out import CLUSTER, REPOS, citus_cluster, search_params, serving, tenant_keys

WARM_UP = 20
# "duration: 1.234 ms  bind __asyncpg_stmt_3__: WITH query_terms AS (..."
LOGGED = re.compile(r"duration: ([0-9.]+) ms\s+(parse|bind|execute|statement)[^:]*:\s*(.{0,60})")
STATEMENTS = (  # how a statement's text begins, on the coordinator or on a shard
    ("search", ("WITH query_terms", "SELECT memory_search_on", "SELECT public.memory_search_on")),
    ("keyword postings", ("SELECT memory_keyword_postings", "SELECT public.memory_keyword")),
    ("count reads", ("INSERT INTO memory_access", "INSERT INTO public.memory_access")),
    ("transaction", ("BEGIN", "COMMIT", "SET LOCAL")),
)


def statement_of(text: str) -> str:
    head = " ".join(text.split())
    for name, beginnings in STATEMENTS:
        if head.startswith(beginnings):
            return name
    return "other"


def node_logs() -> list[Path]:
    return sorted(Path(CLUSTER["CITUS_DATA"]).glob("node*/server.log"))


async def log_every_statement(url: str, nodes: int) -> None:
    port = int(CLUSTER["CITUS_PORT"])
    for n in range(nodes):
        conn = await asyncpg.connect(url.replace(f":{port}/", f":{port + n}/"))
        try:
            await conn.execute("ALTER SYSTEM SET log_min_duration_statement = 0")
            await conn.execute("SELECT pg_reload_conf()")
        finally:
            await conn.close()


def durations(log: Path, offset: int) -> dict[tuple[str, str], float]:
    """Summed milliseconds per (statement, phase) logged after `offset`."""
    summed: dict[tuple[str, str], float] = defaultdict(float)
    with log.open(errors="replace") as text:
        text.seek(offset)
        for found in LOGGED.finditer(text.read()):
            summed[(statement_of(found.group(3)), found.group(2))] += float(found.group(1))
    return summed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    async with citus_cluster() as url:
        await bulk_load(url, 0, args.memories, REPOS, tenants=args.tenants)
        keys = await tenant_keys(url, args.tenants)
        rng = random.Random(1)
        took: list[float] = []
        offsets: list[int] = []
        async with serving(url) as client:
            for i in range(WARM_UP + args.queries):
                if i == WARM_UP:
                    await log_every_statement(url, len(node_logs()))
                    offsets = [log.stat().st_size for log in node_logs()]
                params = search_params(i, rng)
                bearer = {"Authorization": f"Bearer {keys[rng.randrange(args.tenants)]}"}
                response = await client.get("/search", params=params, headers=bearer)
                response.raise_for_status()
                if i >= WARM_UP:
                    took.append(response.json()["took_ms"])
        logged = [durations(log, offset) for log, offset in zip(node_logs(), offsets, strict=True)]
    print(
        f"{args.queries} searches, {args.memories} memories over {args.tenants} tenants:"
        f" took_ms p50 {pct(took, 50):.1f}, p99 {pct(took, 99):.1f}\n"
    )
    print("| statement | phase | " + " | ".join(f"node {n}" for n in range(len(logged))) + " |")
    print("|---|---|" + "---|" * len(logged))
    keys_seen = sorted({key for node in logged for key in node}, key=lambda k: -logged[0][k])
    for statement, phase in keys_seen:
        per_search = [node.get((statement, phase), 0.0) / args.queries for node in logged]
        if max(per_search) >= 0.05:
            cells = " | ".join(f"{ms:.2f}" for ms in per_search)
            print(f"| {statement} | {phase} | {cells} |")
    print("\nms per search; node 0 is the coordinator.")


if __name__ == "__main__":
    asyncio.run(main())
