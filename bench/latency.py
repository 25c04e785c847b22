"""Search latency and ingest throughput through the real HTTP server, at 10k and 100k memories.

Bulk rows are synthetic (bench/synthetic.py) with vectors from the `hash` provider so the
load takes minutes, not hours, or with --real-vectors the model's own, embedded once by
bench/vector_cache.py; every query and every store below goes through the running server
with the default local embedder. A tenth of the queries are filtered to a repository of
0.1% of the rows and about a third to one of 1%; with --as-hooks every query names a
repository, as a hook's does (the repository's memories and the global ones: 0.1% of the
rows are filed under none), so that the headline is the figure agents meet. Reports
server-side took_ms (which includes the query embedding) and client-side round trips, per
mode, side by side. --against also measures the searches of another commit's server on
its schema (alembic downgrade), in the same run and on the same rows: this tree, the
other, the other, this tree.

    .venv/bin/python -m bench.latency [--sizes 10000,100000] [--queries 300] [--model minilm-l6]
    BENCH_DATA_DIR=/tmp/bench-1m .venv/bin/python -m bench.latency --sizes 1000000 \
        --real-vectors --keep [--as-hooks] [--against b1867d9] [--repos 100]
    BENCH_DATABASE_URL=$(scripts/citus url) .venv/bin/python -m bench.latency ...  # Citus
    ... -m bench.latency --sizes 1000000 --keep --graphs  # without and with repositories' graphs
    ... -m bench.latency --sizes 1000000 --keep --graphs --restart [--prewarm]  # after a start
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.db.migrations import downgrade, upgrade_head_async
from app.db.pool import on_citus
from app.embeddings.base import Embedder
from app.embeddings.factory import build_embedder
from app.embeddings.hashing import HashEmbedder
from app.logging import configure_logging
from app.repository.sql import named
from app.services.graphs import GraphKeeper
from app.telemetry import STORE_PHASES
from bench.support import (
    Cpu,
    fresh_database,
    restart_database,
    server_timings,
    summed_over_nodes,
    tree_head_revision,
    worktree,
)
from bench.synthetic import QUERIES, memory_text
from bench.vector_cache import VectorCache

# None: the server's default (HYBRID_ALPHA).
MODES: dict[str, float | None] = {"vector-only": 1.0, "keyword-only": 0.0, "hybrid": None}
RARE_EVERY = 1000  # RARE_REPO holds 0.1% of the rows
# Issue 69's targets, against the model's own time in the same run: a hybrid search's p50
# and p99 past the query's embedding's; a single store's p50 past its text's embedding's;
# batch ingest's share of the bound (IngestBound).
SEARCH_MARGIN_MS = (3.0, 8.0)
STORE_MARGIN_MS = 4.0
INGEST_SHARE = 0.9
GLOBAL_EVERY = 1000  # 0.1% of the rows are filed under no repository: every search's globals


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


RARE_REPO = "repo-rare"
# The queries' filters: none, one of the --repos repositories (1% of the rows each, by
# default), the repository of 0.1%.
SCOPES = ("all", "repo", "0.1%")


def repo_of(n: int, tenants: int, repos: int, rare_every: int, global_every: int = 0) -> str | None:
    """Row n's repository: one of `repos` evenly, or with `rare_every`, every that many
    rows in RARE_REPO instead (a repository holding 1/rare_every of the rows), and with
    `global_every`, every that many rows in none (a global memory)."""
    if rare_every and n % rare_every == rare_every - 1:
        return RARE_REPO
    if global_every and n % global_every == global_every // 2:
        return None
    return f"repo-{n // max(tenants, 1) % repos}"


async def bulk_load(
    url: str,
    start: int,
    count: int,
    repos: int,
    tenants: int = 0,
    embedder: Embedder | None = None,
    vectors: VectorCache | None = None,
    rare_every: int = 0,
    tenant_of: Callable[[int], str] | None = None,
    global_every: int = 0,
) -> tuple[float, float]:
    """Insert `count` synthetic rows (HNSW dropped during the load, rebuilt after); the
    seconds it all took, and of them the HNSW build's. With `tenants`, the rows are spread
    over tenants `tenant-0` .. `tenant-{tenants - 1}`; with `tenant_of`, row n is that
    tenant's; else all are the default tenant's.
    Their vectors come from the `hash` provider unless `embedder` is given, or `vectors`
    (the real model's, embedded once: bench/vector_cache.py, for rows from 0)."""
    rng = random.Random(start)
    embedder = embedder or HashEmbedder(int(os.environ.get("EMBEDDING_DIM", "384")))
    conn = await asyncpg.connect(url)
    await register_vector(conn)
    began = time.perf_counter()
    await conn.execute("DROP INDEX IF EXISTS memories_embedding_hnsw")
    chunk = 5000
    for offset in range(0, count, chunk):
        texts = [memory_text(rng) for _ in range(min(chunk, count - offset))]
        if vectors is not None:
            embedded: Any = vectors.vectors(start + offset, len(texts))
        else:
            embedded = await embedder.embed([t for t, _ in texts])
        rows = [
            (
                tenant_of(n) if tenant_of else f"tenant-{n % tenants}" if tenants else "default",
                f"{t} (#{n})",
                kind,
                repo_of(n, tenants, repos, rare_every, global_every),
                v,
            )
            for n, ((t, kind), v) in enumerate(
                zip(texts, embedded, strict=True), start=start + offset
            )
        ]
        await conn.executemany(
            "INSERT INTO memories"
            " (tenant_id, content, content_hash, memory_type, source_repo, embedding)"
            " VALUES ($1, $2, memory_content_hash($2), $3, $4, $5)",
            rows,
        )
    await conn.execute("SET maintenance_work_mem = '512MB'")
    building = time.perf_counter()
    await conn.execute(
        "CREATE INDEX memories_embedding_hnsw ON memories"
        " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
    )
    built = time.perf_counter() - building
    await conn.execute("VACUUM ANALYZE memories")
    await conn.close()
    return time.perf_counter() - began, built


# The store measurement's memories: in a repository no search is filtered to, and removed
# after the run, so that a kept database stays as loaded. Before, each run left 1,100
# memories of no repository, which every repository's search takes too (docs/benchmarks.md).
# Each run's own (bench-stores-1, -2, ...): the index entries of an earlier run's, dead until
# a vacuum, are then not in the range its near-duplicate reads scan.
STORES_REPO = "bench-stores"


async def remove_stores(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            *named(
                "DELETE FROM memories WHERE tenant_id = 'default' AND source_repo LIKE :repos",
                {"repos": STORES_REPO + "%"},
            )
        )
    finally:
        await conn.close()


async def count_rows(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM memories"))
    finally:
        await conn.close()


# Each HNSW graph of memories (the tenant's and the repositories'), read into the buffers;
# on a Citus node, of each shard there (the coordinator's are of its empty table). Blocks read.
_PREWARM_GRAPHS = """
SELECT coalesce(sum(pg_prewarm(i.indexrelid)), 0)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE c.relname LIKE 'memories\\_embedding\\_hnsw%' OR c.relname LIKE 'memories\\_graph\\_%'
"""


async def prewarm_graphs(url: str) -> str:
    """What a server that has served long enough holds: every HNSW graph of memories in
    shared_buffers (pg_prewarm; the bench's own extension, on every node)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        started = time.perf_counter()
        blocks = await summed_over_nodes(conn, _PREWARM_GRAPHS)
    finally:
        await conn.close()
    took = time.perf_counter() - started
    return f"prewarmed the HNSW graphs: {blocks * 8 / 1024:.0f} MB in {took:.0f} s"


async def disk_use(url: str) -> str:
    """The database, the table (its rows, and what TOAST holds out of them) and its search
    indexes, on disk (on Citus, the table's shards on every node, with their indexes)."""
    conn = await asyncpg.connect(url)
    try:
        if await on_citus(conn):
            row = await conn.fetchrow(
                "SELECT pg_size_pretty(citus_table_size('memories')) AS heap,"
                " pg_size_pretty(citus_total_relation_size('memories')) AS total,"
                " (SELECT count(*) FROM citus_shards WHERE table_name = 'memories'::regclass)"
                " AS shards"
            )
            return (
                f"disk (Citus): memories {row['heap']} in {row['shards']} shards,"
                f" {row['total']} with its indexes"
            )
        row = await conn.fetchrow(
            """
            SELECT pg_size_pretty(pg_database_size(current_database())) AS database,
                   pg_size_pretty(pg_relation_size('memories')) AS heap,
                   (SELECT pg_size_pretty(pg_relation_size(reltoastrelid)) FROM pg_class
                    WHERE oid = 'memories'::regclass) AS toast,
                   pg_size_pretty(pg_relation_size('memories_embedding_hnsw')) AS hnsw,
                   pg_size_pretty(pg_relation_size('memories_keyword_key')) AS keyword,
                   pg_size_pretty(pg_relation_size(coalesce(
                       to_regclass('memories_scope_vectors_key'),  -- since migration 0040
                       to_regclass('memories_vector_scope_key')))) AS by_scope,
                   current_setting('shared_buffers') AS shared_buffers
            """
        )
    finally:
        await conn.close()
    return (
        f"disk: database {row['database']}, table {row['heap']} (TOAST {row['toast']}),"
        f" HNSW {row['hnsw']},"
        f" keyword GIN {row['keyword']}, vectors by scope {row['by_scope']}"
        f" (shared_buffers {row['shared_buffers']})"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_ready(client: httpx.AsyncClient, timeout_s: float = 300) -> None:
    """Until /readyz answers 200. Generous: right after a large load the server's start
    waits on PostgreSQL's checkpoint and autovacuum (60 s once ran out at a million)."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            response = await client.get("/readyz")
            if response.status_code == 200:
                return
            last = f"{response.status_code} {response.text}"
        except httpx.TransportError as exc:
            last = f"{type(exc).__name__}: {exc}"
        await asyncio.sleep(0.2)
    raise RuntimeError(f"server did not become ready in {timeout_s:.0f} s (last: {last})")


async def measure_search(
    client: httpx.AsyncClient, n: int, repos: int, as_hooks: bool = False
) -> dict[str, dict[str, float]]:
    """Each mode's searches: server-side took_ms and client-side round trips, and beside
    them the query's embedding as the server timed it (the model's seconds in /metrics
    around each search: one request at a time), and what the search took past it."""
    rng = random.Random(1)
    plan = []
    for i in range(n):
        q = QUERIES[i % len(QUERIES)]
        # A tenth of the queries are filtered to a repository of 0.1% of the rows, and
        # about a third (as hooks: all the others) to one of 1%.
        repo = None
        if i % 10 == 0:
            repo = RARE_REPO
        elif as_hooks or i % 3 == 1:
            repo = f"repo-{rng.randrange(repos)}"
        plan.append((q, repo))
    out: dict[str, dict[str, float]] = {}
    for mode, alpha in MODES.items():
        server, client_ms, counts, embedding = [], [], [], []
        by_scope: dict[str, list[float]] = {scope: [] for scope in SCOPES}
        shown = {} if alpha is None else {"alpha": alpha}
        for q, _ in plan[:20]:  # warm-up
            await client.get("/search", params={"q": q, "track_access": False, **shown})
        for q, repo in plan:
            params: dict[str, Any] = {"q": q, "limit": 10, **shown}
            if repo:
                params["source_repo"] = repo
            model_before = (await server_timings(client)).get("model", 0.0)
            began = time.perf_counter()
            response = await client.get("/search", params=params)
            client_ms.append((time.perf_counter() - began) * 1000)
            response.raise_for_status()
            model_after = (await server_timings(client)).get("model", 0.0)
            body = response.json()
            server.append(body["took_ms"])
            embedding.append((model_after - model_before) * 1000)
            by_scope[scope_of(repo)].append(body["took_ms"])
            counts.append(len(body["results"]))
        # Where a run's tail is: the first searches after a start, or spread through it.
        slowest = sorted(range(len(server)), key=lambda i: -server[i])[:3]
        tail = ", ".join(f"#{i + 1} {scope_of(plan[i][1])} {server[i]:.1f}" for i in slowest)
        print(f"{mode}: the slowest of {len(server)} (their place, scope, ms): {tail}", flush=True)
        past = [took - embedded for took, embedded in zip(server, embedding, strict=True)]
        out[mode] = {
            "p50": pct(server, 50),
            "p95": pct(server, 95),
            "p99": pct(server, 99),
            "client_p50": pct(client_ms, 50),
            "client_p99": pct(client_ms, 99),
            "embed_p50": pct(embedding, 50),
            "embed_p99": pct(embedding, 99),
            "past_p50": pct(past, 50),
            "past_p99": pct(past, 99),
            "mean_results": statistics.mean(counts),
            **{f"{scope} p50": pct(took, 50) for scope, took in by_scope.items() if took},
            **{f"{scope} p99": pct(took, 99) for scope, took in by_scope.items() if took},
        }
    return out


def scope_of(repo: str | None) -> str:
    return "all" if repo is None else "0.1%" if repo == RARE_REPO else "repo"


async def measure_store(
    client: httpx.AsyncClient,
    cpu: Cpu,
    model: Embedder,
    n: int,
    batch: int,
    batches: int,
    label: str,
    repo: str,
) -> dict[str, Any]:
    """New memories only (`label` keeps them apart from an earlier run's): a store of
    content already present is a reinforcement, which needs no embedding. Each single
    store with its phases as the server timed them (/metrics around it) and its text's
    embedding; then batches, each just after `model` (the same local model, in this
    process) embedded its texts alone, in the store's parts of 64, so that a busy machine
    slows both sides of each pair alike (IngestBound)."""
    rng = random.Random(label)
    single: list[float] = []
    phases: dict[str, list[float]] = {phase: [] for phase in (*STORE_PHASES, "model")}
    for i in range(n):
        text, kind = memory_text(rng)
        before = await server_timings(client)
        began = time.perf_counter()
        r = await client.post(
            "/memories",
            json={
                "content": f"{text} [{label} s{i}]",
                "memory_type": kind,
                "source_repo": repo,
            },
        )
        single.append((time.perf_counter() - began) * 1000)
        r.raise_for_status()
        after = await server_timings(client)
        for phase, taken in phases.items():
            taken.append((after.get(phase, 0.0) - before.get(phase, 0.0)) * 1000)
    alone, stored = Paired(), Paired()
    texts: list[str] = []
    vectors: list[list[float]] = []
    for b in range(batches):
        items = []
        for i in range(batch):
            text, kind = memory_text(rng)
            items.append(
                {
                    "content": f"{text} [{label} b{b}-{i}]",
                    "memory_type": kind,
                    "source_repo": repo,
                }
            )
        contents = [item["content"] for item in items]
        with alone.timed(cpu, mine=True):
            made = [v for k in range(0, batch, 64) for v in await model.embed(contents[k : k + 64])]
        with stored.timed(cpu, mine=False):
            r = await client.post("/memories/batch", json={"memories": items}, timeout=300)
            r.raise_for_status()
        texts += contents
        vectors += made
    # Each phase's p50 and mean, and the request's time outside them (client-side:
    # parsing, the pool, the commit, the answer, the round trip).
    summary: dict[str, tuple[float, float]] = {
        phase: (pct(phases[phase], 50), statistics.mean(phases[phase])) for phase in STORE_PHASES
    }
    rest = [took - sum(phases[p][i] for p in STORE_PHASES) for i, took in enumerate(single)]
    summary["the rest"] = (pct(rest, 50), statistics.mean(rest))
    count = batch * batches
    return {
        "store_p50": pct(single, 50),
        "store_p99": pct(single, 99),
        "store_embed_p50": pct(phases["model"], 50),
        "store_embed_p99": pct(phases["model"], 99),
        "phases": summary,
        "batch_per_s": count / stored.wall,
        "batch_cpu_service_ms": stored.service * 1000 / count,
        "batch_cpu_database_ms": stored.database * 1000 / count,
        "model_per_s": count / alone.wall,
        "model_cpu_ms": alone.service * 1000 / count,
        "written": (texts, vectors),
    }


@dataclass
class Paired:
    """One side of the batch pairs: wall seconds, and CPU seconds of the service (this
    process for the model alone, the server for the requests) and of PostgreSQL."""

    wall: float = 0.0
    service: float = 0.0
    database: float = 0.0

    @contextlib.contextmanager
    def timed(self, cpu: Cpu, *, mine: bool) -> Iterator[None]:
        mine_before = psutil.Process().cpu_times()
        (service, database), began = cpu.now(), time.perf_counter()
        yield
        self.wall += time.perf_counter() - began
        if mine:
            after = psutil.Process().cpu_times()
            self.service += after.user + after.system - mine_before.user - mine_before.system
        else:
            service_after, database_after = cpu.now()
            self.service += service_after - service
            self.database += database_after - database


@dataclass(frozen=True)
class IngestBound:
    """What batch ingest could reach on this machine, this run: the model's CPU a text and
    the insert's CPU a memory (its row and index entries, in the backend that runs it: the
    same texts, with the model's vectors, into the loaded table), over the cores the model
    keeps busy alone (its CPU over its wall time: under others' load, fewer than the
    machine has). The model alone runs in this process, just before each batch, on the
    batch's texts (measure_store)."""

    model_per_s: float  # the model alone, texts a second
    model_cpu_ms: float  # its CPU a text
    insert_cpu_ms: float  # the insert's CPU a memory (nan: the backend is not on this machine)

    @property
    def cores(self) -> float:
        return self.model_per_s * self.model_cpu_ms / 1000

    @property
    def per_s(self) -> float:
        return self.cores * 1000 / (self.model_cpu_ms + self.insert_cpu_ms)

    def line(self) -> str:
        return (
            f"the ingest bound: the model alone {self.model_per_s:.0f} texts/s,"
            f" {self.model_cpu_ms:.2f} ms CPU a text on {self.cores:.2f} cores; the insert"
            f" (row and index entries) {self.insert_cpu_ms:.2f} ms CPU a memory; bound"
            f" {self.cores:.2f} x 1000 / ({self.model_cpu_ms:.2f} + {self.insert_cpu_ms:.2f})"
            f" = {self.per_s:.0f} memories/s"
        )


async def insert_cpu(url: str, texts: list[str], vectors: list[list[float]]) -> float:
    """The insert's CPU a memory, ms: `texts` with their vectors into the loaded table, in
    one backend, as plain INSERTs (no service, no near-duplicate read), removed after;
    nan where the backend is not a process on this machine."""
    conn = await asyncpg.connect(url)
    try:
        await register_vector(conn)
        try:
            backend: psutil.Process | None = psutil.Process(
                await conn.fetchval("SELECT pg_backend_pid()")
            )
        except psutil.NoSuchProcess:
            backend = None
        rows = [("default", text, "note", STORES_REPO, vector)
                for text, vector in zip(texts, vectors, strict=True)]  # fmt: skip
        insert = (
            "INSERT INTO memories (tenant_id, content, content_hash, memory_type, source_repo,"
            " embedding) VALUES ($1, $2, memory_content_hash($2), $3, $4, $5)"
        )
        await conn.executemany(insert, rows[:64])  # warm-up: the caches, the plan
        await conn.execute(
            *named("DELETE FROM memories WHERE source_repo = :repo", {"repo": STORES_REPO})
        )
        before = backend.cpu_times() if backend else None
        await conn.executemany(insert, rows)
        after = backend.cpu_times() if backend else None
    finally:
        await conn.close()
    await remove_stores(url)
    if before is None or after is None:
        return math.nan
    spent: float = after.user + after.system - before.user - before.system
    return spent * 1000 / len(rows)


def print_searches(title: str, searches: dict[str, dict[str, float]]) -> None:
    print(f"\n### {title}", flush=True)
    print(
        "| mode | p50 ms | p95 ms | p99 ms | client p50 | client p99 | results"
        " | embedding p50 / p99 | past the embedding p50 / p99 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for mode, m in searches.items():
        print(
            f"| {mode} | {m['p50']:.1f} | {m['p95']:.1f} | {m['p99']:.1f} | "
            f"{m['client_p50']:.1f} | {m['client_p99']:.1f} | {m['mean_results']:.1f} | "
            f"{m['embed_p50']:.1f} / {m['embed_p99']:.1f} | "
            f"{m['past_p50']:.1f} / {m['past_p99']:.1f} |"
        )
    print("\nBy the search's scope (server-side ms):\n")
    print("| mode | " + " | ".join(f"{sc} p50 | {sc} p99" for sc in SCOPES) + " |")
    print("|---|" + "---|---|" * len(SCOPES))
    for mode, m in searches.items():
        cells = " | ".join(
            f"{m[f'{sc} p50']:.1f} | {m[f'{sc} p99']:.1f}" if f"{sc} p50" in m else "- | -"
            for sc in SCOPES
        )
        print(f"| {mode} | {cells} |")
    ratio = searches["hybrid"]["p50"] / searches["vector-only"]["p50"]
    print(f"\nhybrid / vector-only (p50): {ratio:.2f}", flush=True)
    hybrid = searches["hybrid"]
    for p, margin in (("p50", SEARCH_MARGIN_MS[0]), ("p99", SEARCH_MARGIN_MS[1])):
        bar = hybrid[f"embed_{p}"] + margin
        verdict = "met" if hybrid[p] <= bar else "not met"
        print(
            f"hybrid {p} {hybrid[p]:.1f} ms against the embedding's {p}"
            f" {hybrid[f'embed_{p}']:.1f} + {margin:.0f} = {bar:.1f}: {verdict}",
            flush=True,
        )


def print_stores(title: str, stores: dict[str, Any], bound: IngestBound) -> None:
    """A store's phases beside its total, and batch ingest beside the bound of the run."""
    print(f"\n#### {title}: single stores and batch ingest", flush=True)
    print("| phase | p50 ms | mean ms |")
    print("|---|---|---|")
    for phase, (median, mean) in stores["phases"].items():
        print(f"| {phase} | {median:.2f} | {mean:.2f} |")
    bar = stores["store_embed_p50"] + STORE_MARGIN_MS
    verdict = "met" if stores["store_p50"] <= bar else "not met"
    print(
        f"single store: p50 {stores['store_p50']:.1f} ms, p99 {stores['store_p99']:.1f} ms"
        f" (client-side); its text's embedding (server-side) p50"
        f" {stores['store_embed_p50']:.1f} ms, p99 {stores['store_embed_p99']:.1f} ms;"
        f" p50 against the embedding's + {STORE_MARGIN_MS:.0f} = {bar:.1f}: {verdict}",
        flush=True,
    )
    share = stores["batch_per_s"] / bound.per_s
    print(bound.line())
    print(
        f"batch ingest: {stores['batch_per_s']:.0f} memories/s, {share:.0%} of the bound"
        f" ({'met' if share >= INGEST_SHARE else 'not met'}: {INGEST_SHARE:.0%});"
        f" CPU a memory: the service {stores['batch_cpu_service_ms']:.2f} ms (the model's"
        f" threads included), PostgreSQL {stores['batch_cpu_database_ms']:.2f} ms",
        flush=True,
    )


def schedule(against: Path | None) -> list[Path | None]:
    """The code measured, in order: this tree alone, or this tree and `against` as A B B A
    (a drift through the run, the machine warming or others' load, falls on both alike)."""
    return [None] if against is None else [None, against, against, None]


async def repository_graphs(url: str, wanted: bool) -> str:
    """Each repository of REPOSITORY_GRAPH_ROWS live memories with a graph of its own
    (`agent-memory graphs`), or none at all; what it did and took."""
    min_rows = Settings().repository_graph_rows if wanted else 0
    conn = await asyncpg.connect(url)
    try:
        started = time.perf_counter()
        plan = await GraphKeeper(conn, min_rows).keep()
        took = time.perf_counter() - started
    finally:
        await conn.close()
    assert plan is not None, "another builder holds the graphs' lock"
    kept = len(plan.keep)
    return (
        f"repositories' graphs: {len(plan.build)} built, {len(plan.drop)} dropped, {kept} kept"
        f" ({took:.0f} s)"
    )


async def set_schema(url: str, tree: Path | None) -> None:
    """The schema the code in `tree` expects (alembic downgrade, by this tree's migrations),
    or this tree's head."""
    if tree is None:
        await upgrade_head_async(url)
    else:
        await asyncio.to_thread(downgrade, url, tree_head_revision(tree))


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--real-vectors",
        action="store_true",
        help="bulk rows with the model's vectors from bench/vector_cache.py (fill it first)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the database and load only what is missing"
    )
    parser.add_argument(
        "--model",
        default="minilm-l6",
        choices=["minilm-l6", "minilm-l3", "minilm-l6+l3"],
        help="the local embedding model (EMBEDDING_MODEL)",
    )
    parser.add_argument(
        "--as-hooks",
        action="store_true",
        help="every query names a repository, with its global memories, as a hook's does",
    )
    parser.add_argument(
        "--graphs",
        action="store_true",
        help="measure this tree without and with repositories' own graphs (agent-memory"
        " graphs, REPOSITORY_GRAPH_ROWS), alternated: without, with, with, without",
    )
    parser.add_argument(
        "--restart",
        action="store_true",
        help="restart PostgreSQL before each run, so that each is the first after a start"
        " (the embedded server, or with BENCH_DATABASE_URL the local Citus cluster), once"
        " pg_prewarm's autoprewarm has read the buffers back",
    )
    parser.add_argument(
        "--prewarm",
        action="store_true",
        help="read every HNSW graph of memories into shared_buffers before each run (with"
        " --restart, before the restart: pg_prewarm's autoprewarm reads them back)",
    )
    parser.add_argument(
        "--repos",
        type=int,
        default=100,
        help="the repositories the rows are spread over (100: each holds 1%%); 10 at"
        " 100,000 rows makes each the size of a million's 1%%",
    )
    parser.add_argument(
        "--no-stores", action="store_true", help="searches only: no stores, no ingest bound"
    )
    parser.add_argument(
        "--against",
        metavar="COMMIT",
        help="also measure the code at COMMIT (its server, on its schema), alternated with"
        " this tree's; or a directory holding another copy of the code",
    )
    args = parser.parse_args()
    # The migration, the server and the model ceiling read these from the environment.
    os.environ["EMBEDDING_MODEL"] = args.model
    os.environ["EMBEDDING_DIM"] = "768" if "+" in args.model else "384"
    sizes = [int(s) for s in args.sizes.split(",")]
    cache = VectorCache(args.model) if args.real_vectors else None
    if cache is not None and not cache.holds(max(sizes)):
        raise SystemExit(f"no cached vectors for {max(sizes)} rows: run bench.vector_cache first")
    with contextlib.ExitStack() as trees:
        against = trees.enter_context(worktree(args.against)) if args.against else None
        await measure_sizes(args, sizes, cache, against)


async def measure_sizes(
    args: argparse.Namespace, sizes: list[int], cache: VectorCache | None, against: Path | None
) -> None:
    repos = args.repos
    # The model alone, in this process, beside each batch (measure_store).
    model = build_embedder(Settings(embedding_provider="local"))  # EMBEDDING_MODEL/_DIM
    await model.embed(["warm-up"] * 64)
    async with fresh_database("agent_memory_bench_latency", reuse=args.keep) as url:
        await remove_stores(url)  # an interrupted run's
        loaded = await count_rows(url)
        for size in sizes:
            if loaded < size:
                took, built = await bulk_load(
                    url,
                    loaded,
                    size - loaded,
                    repos,
                    vectors=cache,
                    rare_every=RARE_EVERY,
                    global_every=GLOBAL_EVERY,
                )
                loaded = size
                print(f"loaded {size} memories in {took:.0f}s (HNSW {built:.0f}s)", flush=True)
            runs = [(tree, False) for tree in schedule(against)]
            if args.graphs:
                runs = [(None, False), (None, True), (None, True), (None, False)]
            for run, (tree, graphs) in enumerate(runs):
                await set_schema(url, tree)
                if args.graphs:
                    print(await repository_graphs(url, graphs), flush=True)
                print(await disk_use(url), flush=True)
                if args.prewarm:
                    print(await prewarm_graphs(url), flush=True)
                if args.restart:
                    waited = await restart_database(url)
                    print(f"restarted; autoprewarm read the buffers back in {waited:.0f} s")
                searches = await serve_and_measure(
                    url, size, args.queries, repos, args, tree, None if args.no_stores else model,
                    run=run + 1,
                )  # fmt: skip
                stores = searches.pop("stores", None)
                await remove_stores(url)  # the next run searches the rows as loaded
                schema = "this tree" if tree is None else f"{args.against}"
                if args.graphs:
                    schema += ", with repositories' graphs" if graphs else ", no graphs"
                mix = ", as hooks send them" if args.as_hooks else ""
                mix += ", the first after a restart" if args.restart else ""
                title = f"{size:,} memories, {schema}{mix} (run {run + 1})"
                print_searches(title, searches)
                if stores is not None:
                    # The server stopped: the insert of what the model made, alone.
                    texts, vectors = stores.pop("written")
                    cost = await insert_cpu(url, texts, vectors)
                    bound = IngestBound(stores["model_per_s"], stores["model_cpu_ms"], cost)
                    print_stores(title, stores, bound)


async def serve_and_measure(
    url: str,
    size: int,
    queries: int,
    repos: int,
    args: argparse.Namespace,
    tree: Path | None,
    model: Embedder | None,
    run: int,
) -> dict[str, Any]:
    """The searches, through a server of this tree's code or of `tree`'s, started for them
    (and stopped after); with `model` (the local model, in this process), the stores too,
    under "stores", in the run's own repository."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": url, "LOG_LEVEL": "WARNING"}
    if tree is not None:  # that tree's own client half, not the one installed from this tree
        env["PYTHONPATH"] = os.pathsep.join([str(tree), str(tree / "client")])
    server = subprocess.Popen(  # noqa: ASYNC220 - started once, outside the timed part
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)], env=env, cwd=tree
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            await wait_ready(client)
            measured: dict[str, Any] = await measure_search(client, queries, repos, args.as_hooks)
            if model is not None:
                # A label of this run's own: a store of an earlier run's content (--keep)
                # would be a reinforcement, with no embedding to wait for.
                label = f"at {size}, {time.time_ns()}"
                cpu = Cpu(url, server.pid)
                measured["stores"] = await measure_store(
                    client, cpu, model, 100, 200, 5, label, f"{STORES_REPO}-{run}"
                )
            rss = psutil.Process(server.pid).memory_info().rss / 2**20
            print(f"the service's memory (RSS) after the run: {rss:.0f} MiB", flush=True)
    finally:
        server.terminate()
        server.wait(30)
    return measured


if __name__ == "__main__":
    asyncio.run(main())
