"""Many tenants on one Citus cluster: one large tenant and many small ones, a million
memories in all. Measures, through the real HTTP server, the large tenant's searches alone
(per mode, as bench.latency does), then a small tenant's hybrid searches alone, while the
large tenant's clients search without pause, and alone again (whether harm outlasts the
load). Each small search is a random small tenant's, with its own key.

Rows are bench.latency's synthetic ones, vectors from the `hash` provider. The cluster is
the caller's (BENCH_DATABASE_URL); with --keep the rows of an earlier run are used again.

    CITUS_DATA=/tmp/agent-memory-citus-mix CITUS_PORT=9800 scripts/citus start 2
    BENCH_DATABASE_URL=$(CITUS_DATA=/tmp/agent-memory-citus-mix CITUS_PORT=9800 \\
        scripts/citus url) .venv/bin/python -m bench.tenant_mix [--memories 1000000] \\
        [--small 99] [--small-size 1000] [--queries 300] [--large-clients 2] [--keep] \\
        [--large-server same|own] [--cpus LIST] [--large-cpus LIST]

A cluster with cores per node, on one machine: the CPUs of each server given with --cpus
and --large-cpus (taskset lists), and of each PostgreSQL node with taskset on its
processes (docs/scale-out.md, "A large tenant on a worker of its own").
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from contextlib import AsyncExitStack
from typing import Any

import asyncpg
import httpx

from app.logging import configure_logging
from app.services.keys import KeyService
from bench.latency import (
    RARE_EVERY,
    bulk_load,
    count_rows,
    disk_use,
    measure_search,
    pct,
)
from bench.scale_out import serving
from bench.support import fresh_database
from bench.synthetic import QUERIES

LARGE = "large"
REPOS = 100


def small_tenant(i: int) -> str:
    return f"small-{i}"


async def create_keys(url: str, tenants: list[str]) -> dict[str, str]:
    conn = await asyncpg.connect(url)
    try:
        service = KeyService.on_connection(conn)
        return {t: (await service.create(t, "bench", "agent")).key for t in tenants}
    finally:
        await conn.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def refused(response: httpx.Response, refusals: list[str]) -> bool:
    """A 503 (the search's time limit, or no connection in time) is an answer to count,
    with its reason; anything else but success ends the run."""
    if response.status_code == 503:
        refusals.append(response.json().get("detail", response.text))
        return True
    response.raise_for_status()
    return False


async def small_searches(
    client: httpx.AsyncClient, keys: dict[str, str], small: int, n: int, seed: int
) -> dict[str, list[Any]]:
    """`n` hybrid searches, each a random small tenant's: server-side and client ms of
    those answered, and the reasons of those refused."""
    rng = random.Random(seed)
    took: list[float] = []
    round_trip: list[float] = []
    refusals: list[str] = []
    for i in range(n):
        tenant = small_tenant(rng.randrange(small))
        params: dict[str, Any] = {"q": QUERIES[i % len(QUERIES)], "limit": 10}
        began = time.perf_counter()
        response = await client.get("/search", params=params, headers=bearer(keys[tenant]))
        round_trip.append((time.perf_counter() - began) * 1000)
        if not refused(response, refusals):
            took.append(response.json()["took_ms"])
    return {"took": took, "client": round_trip, "refused": refusals}


async def large_load(
    client: httpx.AsyncClient, key: str, stop: asyncio.Event, seed: int
) -> tuple[list[float], list[str]]:
    """The large tenant's client: hybrid and keyword-only searches, back to back; their
    server-side ms, and the reasons of those refused."""
    rng = random.Random(seed)
    took: list[float] = []
    refusals: list[str] = []
    while not stop.is_set():
        params: dict[str, Any] = {"q": rng.choice(QUERIES), "limit": 10}
        if len(took) % 2:
            params["alpha"] = 0
        response = await client.get("/search", params=params, headers=bearer(key))
        if not refused(response, refusals):
            took.append(response.json()["took_ms"])
    return took, refusals


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=99, help="small tenants")
    parser.add_argument("--small-size", type=int, default=1000, help="memories each")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--large-clients", type=int, default=2)
    parser.add_argument(
        "--large-server",
        choices=["same", "own"],
        default="same",
        help="the large tenant's clients on the small tenants' server, or on one of their"
        " own (the same database): whether what harms the small ones is in the service",
    )
    parser.add_argument(
        "--cpus", help="CPUs of the small tenants' server (a taskset list); default: any"
    )
    parser.add_argument(
        "--large-cpus", help="CPUs of the large tenant's own server (with --large-server own)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the rows for the next run")
    args = parser.parse_args()
    if args.large_cpus and args.large_server != "own":
        parser.error("--large-cpus needs --large-server own")
    large = args.memories - args.small * args.small_size

    def tenant_of(n: int) -> str:  # the large tenant's rows first, then the small ones'
        return LARGE if n < large else small_tenant((n - large) % args.small)

    async with fresh_database("agent_memory_bench_tenant_mix", reuse=args.keep) as url:
        loaded = await count_rows(url)
        if loaded < args.memories:
            if loaded:
                raise SystemExit(f"{loaded} rows from another run: start from an empty one")
            took, built = await bulk_load(
                url, 0, args.memories, REPOS, rare_every=RARE_EVERY, tenant_of=tenant_of
            )
            print(f"loaded {args.memories} in {took:.0f}s (HNSW {built:.0f}s)", flush=True)
        print(await disk_use(url), flush=True)
        tenants = [LARGE, *(small_tenant(i) for i in range(args.small))]
        keys = await create_keys(url, tenants)
        async with serving(url, args.cpus) as client:
            async with httpx.AsyncClient(
                base_url=client.base_url, timeout=60, headers=bearer(keys[LARGE])
            ) as as_large:
                modes = await measure_search(as_large, args.queries, REPOS)
            await small_searches(client, keys, args.small, 20, seed=0)  # warm-up
            alone = await small_searches(client, keys, args.small, args.queries, seed=1)
            stop = asyncio.Event()
            async with AsyncExitStack() as stack:
                large_client = client
                if args.large_server == "own":
                    large_client = await stack.enter_async_context(serving(url, args.large_cpus))
                loads = [
                    asyncio.create_task(large_load(large_client, keys[LARGE], stop, seed=c))
                    for c in range(args.large_clients)
                ]
                try:
                    busy = await small_searches(client, keys, args.small, args.queries, seed=2)
                finally:
                    stop.set()
                large_took = [t for took, _ in await asyncio.gather(*loads) for t in took]
            large_refused = [r for task in loads for r in task.result()[1]]
            after = await small_searches(client, keys, args.small, args.queries, seed=3)
    print(f"\n### The large tenant alone: {large:,} of {args.memories:,} memories (server-side ms)")
    print("| mode | p50 | p95 | p99 | results |")
    print("|---|---|---|---|---|")
    for mode, m in modes.items():
        print(
            f"| {mode} | {m['p50']:.1f} | {m['p95']:.1f} | {m['p99']:.1f}"
            f" | {m['mean_results']:.1f} |"
        )
    print(
        f"\n### A small tenant's hybrid search ({args.small} tenants of {args.small_size:,};"
        f" {args.queries} searches a phase)"
    )
    print("| phase | p50 ms | p99 | client p50 | client p99 | refused |")
    print("|---|---|---|---|---|---|")
    phases = {
        "alone": alone,
        f"while {args.large_clients} clients of the large tenant search"
        f" ({args.large_server} server)": busy,
        "alone again": after,
    }
    for name, phase in phases.items():
        print(
            f"| {name} | {pct(phase['took'], 50):.1f} | {pct(phase['took'], 99):.1f}"
            f" | {pct(phase['client'], 50):.1f} | {pct(phase['client'], 99):.1f}"
            f" | {len(phase['refused'])} |"
        )
        for reason in sorted(set(phase["refused"])):
            print(f"  refused: {reason}")
    if args.cpus or args.large_cpus:
        print(
            f"\nCPUs: the small tenants' server {args.cpus or 'any'},"
            f" the large tenant's {args.large_cpus or 'any'}"
        )
    print(
        f"\nthe large tenant's searches during the busy phase: {len(large_took)} answered,"
        f" p50 {pct(large_took, 50):.1f} ms, p99 {pct(large_took, 99):.1f} ms;"
        f" {len(large_refused)} refused"
    )
    for reason in sorted(set(large_refused)):
        print(f"  refused: {reason}")


if __name__ == "__main__":
    asyncio.run(main())
