"""One PostgreSQL against a local Citus cluster, side by side: hybrid search and store
latency at the same memories spread over many tenants, and the share of the cluster's
statements that ran on a single shard.

Both databases get the same synthetic rows (bench/synthetic.py, vectors from the `hash`
provider); both servers run at once with the default local embedder, and each query goes
to one and then the other, as a random tenant's key, so that the machine's drift falls on
both alike. The cluster is a coordinator and two workers started by scripts/citus on port
9800 (its build is cached); its statement counts are Citus's own (citus_stat_counters).

    .venv/bin/python -m bench.scale_out [--memories 100000] [--tenants 100] [--queries 300]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from app.db.migrations import upgrade_head_async
from app.logging import configure_logging
from app.services.keys import KeyService
from bench.latency import bulk_load, free_port, pct, wait_ready
from bench.support import fresh_database
from bench.synthetic import QUERIES, memory_text

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = {"CITUS_DATA": "/tmp/agent-memory-citus-bench", "CITUS_PORT": "9800"}
REPOS = 10  # per tenant: a third of the queries are filtered to one


def citus(*args: str) -> str:
    done = subprocess.run(
        [str(ROOT / "scripts" / "citus"), *args],
        env={**os.environ, **CLUSTER},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@contextlib.asynccontextmanager
async def citus_cluster() -> AsyncIterator[str]:
    shutil.rmtree(CLUSTER["CITUS_DATA"], ignore_errors=True)
    citus("start", "2")
    try:
        url = citus("url")
        await upgrade_head_async(url)
        yield url
    finally:
        citus("stop")
        shutil.rmtree(CLUSTER["CITUS_DATA"], ignore_errors=True)


async def tenant_keys(url: str, tenants: int) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        service = KeyService.on_connection(conn)
        return [(await service.create(f"tenant-{t}", "bench", "agent")).key for t in range(tenants)]
    finally:
        await conn.close()


@contextlib.asynccontextmanager
async def serving(url: str, cpus: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """The real server on `url`; with `cpus` (a taskset list, "1" or "0,1") it and every
    thread it starts run on those CPUs only."""
    port = free_port()
    # No per-key rate limit: a benchmark's clients send as fast as they are answered.
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "LOG_LEVEL": "WARNING",
        "PRUNE_INTERVAL_S": "0",
        "RATE_LIMIT_PER_MINUTE": "0",
    }
    pinned = ["taskset", "--cpu-list", cpus] if cpus else []
    server = subprocess.Popen(  # noqa: ASYNC220 - started once, outside the timed part
        [*pinned, sys.executable, "-m", "app.cli", "serve", "--port", str(port)], env=env
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            await wait_ready(client)
            yield client
    finally:
        server.terminate()
        server.wait(30)


async def counters(url: str, reset: bool = False) -> dict[str, int]:
    conn = await asyncpg.connect(url)
    try:
        if reset:
            await conn.execute("SELECT citus_stat_counters_reset()")
        row = await conn.fetchrow(
            "SELECT query_execution_single_shard AS single, query_execution_multi_shard AS multi"
            " FROM citus_stat_counters WHERE name = current_database()"
        )
    finally:
        await conn.close()
    return {"single": int(row["single"]), "multi": int(row["multi"])}


async def timed(client: httpx.AsyncClient, method: str, path: str, **kw: Any) -> tuple[float, Any]:
    began = time.perf_counter()
    response = await client.request(method, path, **kw)
    elapsed = (time.perf_counter() - began) * 1000
    response.raise_for_status()
    return elapsed, response.json()


def search_params(i: int, rng: random.Random) -> dict[str, Any]:
    """The i-th hybrid search's parameters: a third of them filtered to one repository."""
    params: dict[str, Any] = {"q": QUERIES[i % len(QUERIES)], "alpha": 0.6, "limit": 10}
    if i % 3 == 0:
        params["source_repo"] = f"repo-{rng.randrange(REPOS)}"
    return params


async def measure(
    clients: dict[str, httpx.AsyncClient], keys: dict[str, list[str]], n: int, tenants: int
) -> dict[str, dict[str, list[float]]]:
    rng = random.Random(1)
    out: dict[str, dict[str, list[float]]] = {
        name: {"took": [], "client": [], "store": [], "results": []} for name in clients
    }
    for i in range(n + 20):
        tenant = rng.randrange(tenants)
        params = search_params(i, rng)
        text, kind = memory_text(rng)
        for name, client in clients.items():
            headers = {"Authorization": f"Bearer {keys[name][tenant]}"}
            client_ms, body = await timed(client, "GET", "/search", params=params, headers=headers)
            store_ms, _ = await timed(
                client,
                "POST",
                "/memories",
                json={
                    "content": f"{text} [scale-out {i}]",
                    "memory_type": kind,
                    "source_repo": None,
                },  # global, as before writes had to say so
                headers=headers,
            )
            if i >= 20:  # the first 20 warm up
                out[name]["took"].append(body["took_ms"])
                out[name]["client"].append(client_ms)
                out[name]["store"].append(store_ms)
                out[name]["results"].append(len(body["results"]))
    return out


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    async with (
        fresh_database("agent_memory_bench_scale_out") as single_url,
        citus_cluster() as cluster_url,
    ):
        urls = {"one PostgreSQL": single_url, "Citus, 2 workers": cluster_url}
        keys = {}
        for name, url in urls.items():
            took, built = await bulk_load(url, 0, args.memories, REPOS, args.tenants)
            print(f"{name}: loaded {args.memories} in {took:.0f}s (HNSW {built:.0f}s)")
            keys[name] = await tenant_keys(url, args.tenants)
        async with (
            serving(single_url) as one_node,
            serving(cluster_url) as cluster,
        ):
            await counters(cluster_url, reset=True)
            runs = await measure(
                {"one PostgreSQL": one_node, "Citus, 2 workers": cluster},
                keys,
                args.queries,
                args.tenants,
            )
            statements = await counters(cluster_url)
    print(
        f"\n{args.memories:,} memories over {args.tenants} tenants, {args.queries} hybrid"
        " searches and as many stores on each, alternating\n"
    )
    print("| | search p50 ms | p99 | client p50 | client p99 | store p50 | store p99 | results |")
    print("|---|---|---|---|---|---|---|---|")
    for name, m in runs.items():
        print(
            f"| {name} | {pct(m['took'], 50):.1f} | {pct(m['took'], 99):.1f}"
            f" | {pct(m['client'], 50):.1f} | {pct(m['client'], 99):.1f}"
            f" | {pct(m['store'], 50):.1f} | {pct(m['store'], 99):.1f}"
            f" | {sum(m['results']) / len(m['results']):.1f} |"
        )
    single, multi = statements["single"], statements["multi"]
    print(
        f"\ncluster statements during the run: {single} on one shard, {multi} on several"
        f" ({single / max(single + multi, 1):.1%} single-shard)"
    )


if __name__ == "__main__":
    asyncio.run(main())
