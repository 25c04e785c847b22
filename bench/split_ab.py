"""Whether a tenant's searches cost more once Citus has split its shard out
(`agent-memory isolate-tenant`): two tenants of the same synthetic rows, interleaved, on
one cluster; both searched by turns, then one is isolated to a shard of its own, then
both are searched by turns again. Server-side ms, per mode and tenant.

    CITUS_DATA=/tmp/agent-memory-citus-ab CITUS_PORT=9850 scripts/citus start 2
    BENCH_DATABASE_URL=$(CITUS_DATA=/tmp/agent-memory-citus-ab CITUS_PORT=9850 \\
        scripts/citus url) .venv/bin/python -m bench.split_ab [--memories 200000] \\
        [--queries 300] [--again]

With --again, the database of the last run is searched once more, by turns, as it is.
With --step-by-step, the split is Citus's function alone, and the tenants are searched
just after it, after `ANALYZE memories` and after `VACUUM memories` (what isolate-tenant
does at once), by the same server; turn autovacuum off on the workers first
(`ALTER SYSTEM SET autovacuum = off; SELECT pg_reload_conf();` on each).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import httpx

from app.domain.placement import isolation_request
from app.logging import configure_logging
from app.repository.placement import PlacementRepository
from app.services.placement import PlacementService
from bench.latency import MODES, bulk_load, count_rows, pct
from bench.scale_out import serving
from bench.support import fresh_database
from bench.synthetic import QUERIES
from bench.tenant_mix import bearer, create_keys

SPLIT, KEPT = "split", "kept"
REPOS = 100


async def by_turns(
    client: httpx.AsyncClient, keys: dict[str, str], n: int, alpha: float | None
) -> dict[str, list[float]]:
    """`n` searches a tenant, the two tenants by turns (each first every other time)."""
    took: dict[str, list[float]] = {SPLIT: [], KEPT: []}
    shown = {} if alpha is None else {"alpha": alpha}
    for i in range(n):
        params: dict[str, Any] = {"q": QUERIES[i % len(QUERIES)], "limit": 10, **shown}
        for tenant in (SPLIT, KEPT) if i % 2 else (KEPT, SPLIT):
            response = await client.get(
                "/search", params={**params, "track_access": False}, headers=bearer(keys[tenant])
            )
            response.raise_for_status()
            took[tenant].append(response.json()["took_ms"])
    return took


async def timed(url: str, work: Callable[[asyncpg.Connection], Awaitable[Any]]) -> float:
    """Seconds `work` took on a connection of its own."""
    conn = await asyncpg.connect(url)
    try:
        began = time.perf_counter()
        await work(conn)
        return time.perf_counter() - began
    finally:
        await conn.close()


def isolate(conn: asyncpg.Connection) -> Awaitable[Any]:
    """As isolate-tenant does it: the split, then the statistics."""
    return PlacementService(conn).isolate(isolation_request(SPLIT, None, "block_writes"))


def split_alone(conn: asyncpg.Connection) -> Awaitable[None]:
    """Citus's split, without the statistics isolate-tenant takes after it."""
    return PlacementRepository(conn).isolate(SPLIT, "block_writes")


def statement(sql: str) -> Callable[[asyncpg.Connection], Awaitable[Any]]:
    async def run(conn: asyncpg.Connection) -> None:
        await conn.execute(sql)

    return run


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=200_000, help="in all, half each")
    parser.add_argument("--queries", type=int, default=300, help="a tenant, a mode, a phase")
    parser.add_argument("--again", action="store_true", help="search the last run's rows")
    parser.add_argument(
        "--step-by-step", action="store_true", help="split alone, then ANALYZE, then VACUUM"
    )
    args = parser.parse_args()
    async with fresh_database("agent_memory_bench_split_ab", reuse=args.again) as url:
        if not args.again:
            if await count_rows(url):
                raise SystemExit("the database has rows: start from an empty one")
            took, built = await bulk_load(
                url, 0, args.memories, REPOS, tenant_of=lambda n: (SPLIT, KEPT)[n % 2]
            )
            print(f"loaded {args.memories} in {took:.0f}s (HNSW {built:.0f}s)", flush=True)
        keys = await create_keys(url, [SPLIT, KEPT])
        results: dict[str, dict[str, list[float]]] = {}
        modes = {mode: MODES[mode] for mode in ("vector-only", "hybrid")}
        async with serving(url) as client:

            async def phase(name: str) -> None:
                for mode, alpha in modes.items():
                    await by_turns(client, keys, 20, alpha)  # warm-up
                    results[f"{name}, {mode}"] = await by_turns(client, keys, args.queries, alpha)

            if args.again:
                await phase("after")
            elif args.step_by_step:
                await phase("before")
                print(f"{SPLIT} split out in {await timed(url, split_alone):.0f}s", flush=True)
                await phase("just after the split")
                for command in ("ANALYZE memories", "VACUUM memories"):
                    print(f"{command} in {await timed(url, statement(command)):.1f}s", flush=True)
                    await phase(f"after {command}")
            else:
                await phase("before")
                print(f"isolated {SPLIT} in {await timed(url, isolate):.0f}s", flush=True)
                await phase("after")
    print(f"\n### Two tenants of {args.memories // 2:,}: `{SPLIT}` isolated between the phases")
    print(f"| phase, mode | {SPLIT} p50 | p99 | {KEPT} p50 | p99 |")
    print("|---|---|---|---|---|")
    for name, took_ms in results.items():
        cells = " | ".join(
            f"{pct(took_ms[t], 50):.1f} | {pct(took_ms[t], 99):.1f}" for t in (SPLIT, KEPT)
        )
        print(f"| {name} | {cells} |")


if __name__ == "__main__":
    asyncio.run(main())
