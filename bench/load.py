"""Bounded mixed load against the loopback server: stores, searches, reinforces, snapshots.

Steps of 1, 4, 8, 16, 32 and 64 concurrent clients, each for a fixed number of seconds,
over 10k preloaded memories; reports throughput, p50/p99 per operation and the error rate,
where throughput peaks and from how few clients it is within 5% of that peak.

With --noisy N, a noisy-neighbour step follows: the quiet tenant runs the same mix at
--quiet-clients, first alone, then while another tenant's N clients send maximum-cost
searches (2,000 characters of about 300 distinct words the corpus holds), then alone again
(whether the flood left lasting harm); it reports the quiet tenant's p99 and errors side
by side, and what the noisy tenant was answered. With --noisy-kind ingest, the noisy
clients store 2,000-character memories instead. With --statements, each phase is followed
by the database's costliest statements (pg_stat_statements).

Only 127.0.0.1 is ever contacted; every loop is bounded.

    .venv/bin/python -m bench.load [--steps 1,4,8,16,32,64] [--seconds 20]
    .venv/bin/python -m bench.load --steps "" --noisy 16 --quiet-clients 4
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import time
from collections import defaultdict

import aiohttp
import asyncpg
import httpx

from app.logging import configure_logging
from app.services.keys import KeyService
from bench.latency import bulk_load, free_port, pct, wait_ready
from bench.support import fresh_database
from bench.synthetic import QUERIES, memory_text

MIX = (("search", 0.55), ("store", 0.2), ("reinforce", 0.15), ("snapshot", 0.1))


def pick(rng: random.Random) -> str:
    roll, total = rng.random(), 0.0
    for op, weight in MIX:
        total += weight
        if roll < total:
            return op
    return MIX[0][0]


async def send(
    client: aiohttp.ClientSession,
    method: str,
    path: str,
    params: dict[str, str] | None = None,
    json: dict[str, str | None] | None = None,
) -> int:
    async with client.request(method, path, params=params, json=json) as response:
        await response.read()
        return response.status


async def client_loop(
    client: aiohttp.ClientSession,
    seed: int,
    deadline: float,
    results: dict[str, list[float]],
    errors: dict[str, int],
    known: list[tuple[str, str]],
) -> None:
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        op = pick(rng)
        repo = f"repo-{rng.randrange(100)}"
        began = time.perf_counter()
        try:
            if op == "search":
                params = {"q": rng.choice(QUERIES)}
                if rng.random() < 0.3:
                    params["source_repo"] = repo
                status = await send(client, "GET", "/search", params=params)
            elif op == "store":
                text, kind = memory_text(rng)
                content = f"{text} [load {seed}-{rng.random():.9f}]"
                status = await send(
                    client,
                    "POST",
                    "/memories",
                    json={"content": content, "memory_type": kind, "source_repo": repo},
                )
                if status == 201:
                    known.append((content, repo))
            elif op == "reinforce" and known:
                content, filed = rng.choice(known)
                status = await send(
                    client, "POST", "/memories", json={"content": content, "source_repo": filed}
                )
            else:
                status = await send(client, "GET", "/snapshot", params={"source_repo": repo})
            failure = f"{op} {status}" if status >= 400 else None
        except (aiohttp.ClientError, TimeoutError) as exc:
            failure = f"{op} {type(exc).__name__}"
        elapsed = (time.perf_counter() - began) * 1000
        if failure is None:
            results[op].append(elapsed)
        else:
            errors[failure] += 1


def worst_query(rng: random.Random) -> str:
    """As costly as a query may be: the corpus's own words, as many distinct ones as fit
    in the longest query allowed."""
    words: dict[str, None] = {}
    while len(words) < 300:
        text, _ = memory_text(rng)
        words.update(dict.fromkeys(w.strip(".,:;()[]").lower() for w in text.split()))
        words.update({f"{w}{len(words)}": None for w in list(words)[-3:]})
    return " ".join(words)[:2000]


async def noisy_loop(
    client: aiohttp.ClientSession,
    seed: int,
    deadline: float,
    answers: dict[str, int],
    kind: str = "search",
) -> None:
    """`search`: the costliest queries; `ingest`: stores of 2,000-character memories, each
    a long model call."""
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        text = worst_query(rng)
        try:
            if kind == "ingest":
                status = await send(
                    client, "POST", "/memories", json={"content": text, "source_repo": None}
                )
            else:
                status = await send(client, "POST", "/search", json={"q": text})
            answers[str(status)] += 1
        except (aiohttp.ClientError, TimeoutError) as exc:
            answers[type(exc).__name__] += 1


class StatementTimes:
    """The statements that took the database the most time in a phase, with their mean
    (`--statements`: pg_stat_statements, which the cluster must preload)."""

    TOP = """
        SELECT calls, total_exec_time, mean_exec_time, toplevel,
               left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS query
        FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 8
    """

    def __init__(self, url: str) -> None:
        self.url = url

    async def prepare(self) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            preloaded = [
                name.strip()
                for name in (await conn.fetchval("SHOW shared_preload_libraries")).split(",")
                if name.strip()
            ]
            if "pg_stat_statements" not in preloaded:
                wanted = ", ".join([*preloaded, "pg_stat_statements"])
                raise SystemExit(
                    "--statements needs pg_stat_statements preloaded: run with BENCH_DATA_DIR,"
                    " and in that cluster ALTER SYSTEM SET shared_preload_libraries ="
                    f" {wanted} (restarted by the next run)"
                )
            await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        finally:
            await conn.close()

    async def begin_phase(self) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            await conn.execute("SELECT pg_stat_statements_reset()")
        finally:
            await conn.close()

    async def print_phase(self) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            for row in await conn.fetch(self.TOP):
                where = "top" if row["toplevel"] else "in "  # "in": inside a function
                print(
                    f"    {row['calls']:6d} calls {row['mean_exec_time']:8.2f} ms mean"
                    f" {row['total_exec_time']:9.0f} ms {where} {row['query']}"
                )
        finally:
            await conn.close()


async def noisy_neighbour(
    base_url: str,
    keys: dict[str, str],
    quiet_clients: int,
    noisy_clients: int,
    seconds: float,
    kind: str = "search",
    statements: StatementTimes | None = None,
) -> None:
    print(
        "\n| run | quiet req/s | quiet errors | quiet search p99 | quiet store p99 |"
        " quiet snapshot p99 | noisy answers |"
    )
    print("|---|---|---|---|---|---|---|")

    def session(key: str) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            base_url=base_url,
            headers={"Authorization": f"Bearer {key}"},
            connector=aiohttp.TCPConnector(limit=128),
            timeout=aiohttp.ClientTimeout(total=30),
        )

    async with session(keys["quiet"]) as quiet, session(keys["noisy"]) as noisy:
        runs = (
            ("quiet alone", 0),
            (f"with {noisy_clients} noisy", noisy_clients),
            ("quiet after", 0),
        )
        for label, noise in runs:
            results: dict[str, list[float]] = defaultdict(list)
            errors: dict[str, int] = defaultdict(int)
            answers: dict[str, int] = defaultdict(int)
            began = time.monotonic()
            deadline = began + seconds
            known: list[tuple[str, str]] = []
            if statements:
                await statements.begin_phase()
            await asyncio.gather(
                *(
                    client_loop(quiet, 7000 + i, deadline, results, errors, known)
                    for i in range(quiet_clients)
                ),
                *(noisy_loop(noisy, 9000 + i, deadline, answers, kind) for i in range(noise)),
            )
            elapsed = time.monotonic() - began
            done = sum(len(v) for v in results.values())
            everything = [ms for op in results for ms in results[op]]

            def cell(op: str, results: dict[str, list[float]] = results) -> str:
                return f"{pct(results[op], 99):.0f}" if results[op] else "-"

            noisy_text = ", ".join(f"{k}: {n}" for k, n in sorted(answers.items())) or "-"
            print(
                f"| {label} | {done / elapsed:.0f} | {sum(errors.values())} | {cell('search')} |"
                f" {cell('store')} | {cell('snapshot')} | {noisy_text} |",
                flush=True,
            )
            if errors:
                print("  quiet errors: " + ", ".join(f"{k}: {n}" for k, n in errors.items()))
            if everything:
                print(f"  quiet p99, all operations: {pct(everything, 99):.0f} ms")
            if statements:
                await statements.print_phase()


async def make_keys(url: str) -> dict[str, str]:
    """The preloaded rows are the default tenant's: the quiet tenant is that one."""
    conn = await asyncpg.connect(url)
    try:
        service = KeyService.on_connection(conn)
        quiet = await service.create("default", "bench quiet", "agent")
        noisy = await service.create("noisy", "bench noisy", "agent")
    finally:
        await conn.close()
    return {"quiet": quiet.key, "noisy": noisy.key}


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="1,4,8,16,32,64", help="'' for none")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--noisy", type=int, default=0, help="noisy tenant's clients (0: skip)")
    parser.add_argument("--quiet-clients", type=int, default=4)
    parser.add_argument("--noisy-kind", choices=("search", "ingest"), default="search")
    parser.add_argument(
        "--statements",
        action="store_true",
        help="per noisy-neighbour phase, the database's costliest statements"
        " (needs pg_stat_statements in shared_preload_libraries)",
    )
    args = parser.parse_args()
    async with fresh_database("agent_memory_bench_load") as url:
        statements = StatementTimes(url) if args.statements else None
        if statements:
            await statements.prepare()
        await bulk_load(url, 0, 10_000, 100)
        keys = await make_keys(url)
        port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "LOG_LEVEL": "WARNING",
            "DB_POOL_MAX": "20",
            "RATE_LIMIT_PER_MINUTE": "0",
        }
        server = subprocess.Popen(  # noqa: ASYNC220 - started once, outside the timed part
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)], env=env
        )
        try:
            base_url = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base_url) as probe:
                await wait_ready(probe)
            # aiohttp, not httpx, for the load itself: the client shares the two cores with the
            # server, and httpx took 1.9 ms of CPU per request (0.31 cores at 161 req/s and 16
            # clients), aiohttp 0.3 ms (0.055 cores at 185 req/s).
            async with aiohttp.ClientSession(
                base_url=base_url,
                headers={"Authorization": f"Bearer {keys['quiet']}"},
                connector=aiohttp.TCPConnector(limit=128),
                timeout=aiohttp.ClientTimeout(total=30),
            ) as client:
                print(
                    "| clients | req/s | errors | search p50 | search p99 | store p50 |"
                    " store p99 | snapshot p99 |"
                )
                print("|---|---|---|---|---|---|---|---|")
                known: list[tuple[str, str]] = []
                failures: dict[str, int] = {}
                steps: list[tuple[int, float, str]] = []  # clients, req/s, search p99
                for clients in (int(s) for s in args.steps.split(",") if s):
                    results: dict[str, list[float]] = defaultdict(list)
                    errors: dict[str, int] = defaultdict(int)
                    began = time.monotonic()
                    deadline = began + args.seconds
                    await asyncio.gather(
                        *(
                            client_loop(
                                client, clients * 1000 + i, deadline, results, errors, known
                            )
                            for i in range(clients)
                        )
                    )
                    elapsed = time.monotonic() - began
                    done = sum(len(v) for v in results.values())
                    failed = sum(errors.values())
                    rate = failed / max(done + failed, 1)

                    def cell(op: str, p: float, results: dict[str, list[float]] = results) -> str:
                        return f"{pct(results[op], p):.0f}" if results[op] else "-"

                    print(
                        f"| {clients} | {done / elapsed:.0f} | {failed} ({rate:.1%}) | "
                        f"{cell('search', 50)} | {cell('search', 99)} | {cell('store', 50)} | "
                        f"{cell('store', 99)} | {cell('snapshot', 99)} |",
                        flush=True,
                    )
                    failures.update(
                        {f"{kind} at {clients} clients": n for kind, n in errors.items()}
                    )
                    steps.append((clients, done / elapsed, cell("search", 99)))
                if steps:
                    peak = max(steps, key=lambda step: step[1])
                    knee = next(step for step in steps if step[1] >= 0.95 * peak[1])
                    print(
                        f"\nthroughput peaks at {peak[0]} clients ({peak[1]:.0f} req/s, search"
                        f" p99 {peak[2]} ms); within 5% of that from {knee[0]} clients"
                        f" ({knee[1]:.0f} req/s, search p99 {knee[2]} ms)"
                    )
                if failures:
                    print("\nerrors: " + ", ".join(f"{k}: {n}" for k, n in failures.items()))
            if args.noisy:
                await noisy_neighbour(
                    base_url,
                    keys,
                    args.quiet_clients,
                    args.noisy,
                    args.seconds,
                    args.noisy_kind,
                    statements,
                )
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    asyncio.run(main())
