"""Where a write's time goes: each phase of the store path, from the server's own timings
(`agent_memory_store_phase_seconds` in /metrics), for single stores and for batches, beside
the model alone on the same texts: each request follows the model embedding its texts
alone, in the store's chunks, so that the machine's noise slows both sides of each pair.
Then imports of files without vectors (POST /memories/import), paired the same way.

A store of N memories is timed by the server in phases (app/services/memories.py): the
secret screen, the exact-duplicate check (`known`), provenance (`provenance`), the wait
for the embedding (`embed_wait`; the model runs while the previous chunk is written),
taking a connection again (`reconnect`: it was given back while the model ran), the
near-duplicate query (`near_duplicates`), and the insert or reinforcement (`write`). "The
rest" is the request's time outside them: parsing, the commit, the answer.

    .venv/bin/python -m bench.store_phases [--size 10000] [--singles 200] [--batches 20]
        [--chunks 64,16,64,16]   # the embedding chunk, in turn
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass

import asyncpg
import httpx

from app.config import Settings
from app.embeddings.base import Embedder
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from app.main import create_app
from app.services import memories
from app.services.transfer import IMPORT_CHUNK
from app.telemetry import STORE_PHASES
from bench.latency import bulk_load, pct
from bench.support import Cpu, fresh_database, server_timings
from bench.synthetic import memory_text

REPO = "bench-phases"


def texts_for(label: str, count: int) -> list[tuple[str, str]]:
    rng = random.Random(label)
    return [(f"{text} [{label} {i}]", kind) for i, (text, kind) in
            enumerate(memory_text(rng) for _ in range(count))]  # fmt: skip


@dataclass
class Run:
    took: list[float]  # each request's milliseconds
    alone: list[float]  # the model alone on the same texts, just before: milliseconds
    phases: dict[str, float]  # the server's phase seconds over the requests
    memories: int
    # CPU seconds: this process while the model ran alone; this process and the database
    # while the requests ran
    cpu_alone: float = 0.0
    cpu_store: float = 0.0
    cpu_database: float = 0.0

    @property
    def share(self) -> float:
        """What the model alone would take, over what the store took: 1 is the model's
        speed. Each request is paired with the model on its own texts, run just before it,
        so that a noisy machine slows both sides of each pair alike."""
        return sum(self.alone) / sum(self.took)

    @contextlib.contextmanager
    def timed(self, cpu: Cpu, *, alone: bool) -> Iterator[None]:
        """One side of a pair: the model alone, or the request; its time and CPU."""
        began, (mine, database) = time.perf_counter(), cpu.now()
        yield
        ms = (time.perf_counter() - began) * 1000
        spent_mine, spent_database = (after - before for after, before in
                                      zip(cpu.now(), (mine, database), strict=True))  # fmt: skip
        if alone:
            self.alone.append(ms)
            self.cpu_alone += spent_mine
        else:
            self.took.append(ms)
            self.cpu_store += spent_mine
            self.cpu_database += spent_database


async def timed_writes(
    client: httpx.AsyncClient, model: Embedder, cpu: Cpu, label: str, count: int, batch: int
) -> Run:
    """`count` new memories, one request per `batch` of them, each after the model alone
    embedded its texts in the store path's chunks."""
    before = await server_timings(client)
    run = Run([], [], {}, count)
    items = [
        {"content": t, "memory_type": k, "source_repo": REPO} for t, k in texts_for(label, count)
    ]
    for i in range(0, count, batch):
        part = items[i : i + batch]
        with run.timed(cpu, alone=True):
            for k in range(0, len(part), memories.EMBED_CHUNK):
                chunk = part[k : k + memories.EMBED_CHUNK]
                await model.embed([item["content"] for item in chunk])
        with run.timed(cpu, alone=False):
            if batch == 1:
                answer = await client.post("/memories", json=part[0])
            else:
                answer = await client.post("/memories/batch", json={"memories": part})
        answer.raise_for_status()
    after = await server_timings(client)
    run.phases = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
    return run


async def import_run(
    client: httpx.AsyncClient, model: Embedder, cpu: Cpu, label: str, files: int, lines: int
) -> Run:
    """`files` imports of `lines` new memories each, without vectors (what another model's
    export, or a hand-made file, needs embedded), each after the model alone on its texts."""
    run = Run([], [], {}, files * lines)
    header = json.dumps({"format": "agent-memory/export", "version": 1})
    for k in range(files):
        texts = texts_for(f"{label} {k}", lines)
        body = "\n".join(
            [header] + [json.dumps({"content": t, "memory_type": kind, "source_repo": REPO})
                        for t, kind in texts]
        )  # fmt: skip
        with run.timed(cpu, alone=True):
            for i in range(0, lines, IMPORT_CHUNK):
                await model.embed([t for t, _ in texts[i : i + IMPORT_CHUNK]])
        with run.timed(cpu, alone=False):
            answer = await client.post(
                "/memories/import", content=body.encode(),
                headers={"Content-Type": "application/x-ndjson"},
            )  # fmt: skip
        answer.raise_for_status()
    return run


async def batch_run(
    client: httpx.AsyncClient, model: Embedder, cpu: Cpu, label: str, batches: int, chunk: int
) -> Run:
    """`batches` batches of 100 new memories, embedded `chunk` at a time."""
    kept, memories.EMBED_CHUNK = memories.EMBED_CHUNK, chunk
    try:
        return await timed_writes(client, model, cpu, label, batches * 100, 100)
    finally:
        memories.EMBED_CHUNK = kept


def report(name: str, run: Run) -> None:
    """One column of the phase table: milliseconds per memory."""
    took, count = run.took, run.memories
    total = sum(took)
    print(f"\n{name}: {count} memories in {len(took)} requests;"
          f" a request p50 {pct(took, 50):.1f} ms, p99 {pct(took, 99):.1f} ms;"
          f" the model alone on the same texts p50 {pct(run.alone, 50):.1f} ms")  # fmt: skip
    print("| phase | ms per memory | share |")
    print("|---|---|---|")
    timed = 0.0
    for phase in STORE_PHASES:
        ms = run.phases.get(phase, 0.0) * 1000
        timed += ms
        print(f"| {phase} | {ms / count:.2f} | {ms / total:.0%} |")
    rest = total - timed
    print(f"| the rest | {rest / count:.2f} | {rest / total:.0%} |")
    model = run.phases.get("model", 0.0) * 1000
    print(
        f"(the model's own time in the store: {model / count:.2f} ms a memory, {model / total:.0%})"
    )
    print(f"at {run.share:.0%} of the model alone: {count * 1000 / total:.0f} memories/s")
    print(cpu_line(run))


def cpu_line(run: Run) -> str:
    """CPU a memory: what the model alone spent, and what the store spent beside it."""
    alone, mine, database = (1000 * seconds / run.memories for seconds in
                             (run.cpu_alone, run.cpu_store, run.cpu_database))  # fmt: skip
    return (
        f"CPU a memory: the model alone {alone:.1f} ms; the store {mine + database:.1f} ms"
        f" ({mine:.1f} in this process, the model's threads included; {database:.1f} in"
        f" PostgreSQL): {alone / (mine + database):.0%} of it is the model's"
    )


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="memories stored first")
    parser.add_argument("--singles", type=int, default=200)
    parser.add_argument("--batches", type=int, default=20, help="of 100 memories each")
    parser.add_argument("--imports", type=int, default=4, help="of 500 lines each")
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database")
    parser.add_argument(
        "--chunks",
        default=str(memories.EMBED_CHUNK),
        help="embedding chunk sizes to run the batches with, in turn (64,16,64,16)",
    )
    args = parser.parse_args()
    async with fresh_database("agent_memory_bench_phases", reuse=args.reuse) as url:
        conn = await asyncpg.connect(url)
        stored = await conn.fetchval("SELECT count(*) FROM memories")
        await conn.execute("DELETE FROM memories WHERE source_repo = $1", REPO)
        await conn.close()
        if stored < args.size:  # the model's own vectors, so that near-duplicates are real
            embedder = build_embedder(Settings(embedding_provider="local"))
            await bulk_load(url, stored, args.size - stored, repos=50, embedder=embedder)
        app = create_app(Settings(database_url=url), database_url=url)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost", timeout=300
            ) as client:
                label = f"run {time.time_ns()}"
                model = build_embedder(Settings(embedding_provider="local"))
                await model.embed(["warm-up"] * memories.EMBED_CHUNK)
                cpu = Cpu(url)
                singles = await timed_writes(client, model, cpu, f"{label} s", args.singles, 1)
                chunks = [int(size) for size in args.chunks.split(",")]
                runs = []
                for k, size in enumerate(chunks):
                    batches = await batch_run(
                        client, model, cpu, f"{label} b{k}", args.batches, size
                    )
                    runs.append((size, batches))
                imports = await import_run(client, model, cpu, f"{label} i", args.imports, 500)
    print(f"{args.size:,} memories stored first")
    report("single stores", singles)
    for size, run in runs:
        report(f"batches of 100, chunks of {size}", run)
    print(f"\nimports of 500 lines without vectors: a file p50 {pct(imports.took, 50):.0f} ms,"
          f" the model alone on its texts p50 {pct(imports.alone, 50):.0f} ms;"
          f" at {imports.share:.0%} of the model alone")  # fmt: skip
    print(cpu_line(imports))


if __name__ == "__main__":
    asyncio.run(main())
