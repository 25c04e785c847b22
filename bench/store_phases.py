"""Where a write's time goes: each phase of the store path, from the server's own timings
(`agent_memory_store_phase_seconds` in /metrics), for single stores and for batches, beside
the model alone on the same texts in the same run.

A store of N memories is timed by the server in phases (app/services/memories.py): the
secret screen, the exact-duplicate check (`known`), provenance (`provenance`), the wait
for the embedding (`embed_wait`; the model runs while the previous chunk is written),
taking a connection again (`reconnect`: it was given back while the model ran), the
near-duplicate query (`near_duplicates`), and the insert or reinforcement (`write`). "The
rest" is the request's time outside them: parsing, the commit, the answer.

    .venv/bin/python -m bench.store_phases [--size 10000] [--singles 200] [--batches 20]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

import asyncpg
import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.config import Settings
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from app.main import create_app
from app.services.memories import EMBED_CHUNK
from app.telemetry import STORE_PHASES
from bench.latency import bulk_load, pct
from bench.support import fresh_database
from bench.synthetic import memory_text

REPO = "bench-phases"


async def server_timings(client: httpx.AsyncClient) -> dict[str, float]:
    """Seconds per phase so far, and the model's own seconds and texts."""
    text = (await client.get("/metrics")).raise_for_status().text
    seconds: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "agent_memory_store_phase_seconds_total":
                seconds[sample.labels["phase"]] = sample.value
            elif sample.name == "agent_memory_embedding_duration_seconds_sum":
                seconds["model"] = sample.value
            elif sample.name == "agent_memory_embedded_texts_total":
                seconds["texts"] = sample.value
    return seconds


def texts_for(label: str, count: int) -> list[tuple[str, str]]:
    rng = random.Random(label)
    return [(f"{text} [{label} {i}]", kind) for i, (text, kind) in
            enumerate(memory_text(rng) for _ in range(count))]  # fmt: skip


async def timed_writes(
    client: httpx.AsyncClient, label: str, count: int, batch: int
) -> tuple[list[float], dict[str, float], float]:
    """`count` new memories, one request per `batch` of them: each request's milliseconds,
    the server's phase seconds over them, and the whole run's seconds."""
    before = await server_timings(client)
    took = []
    began = time.perf_counter()
    items = [
        {"content": t, "memory_type": k, "source_repo": REPO} for t, k in texts_for(label, count)
    ]
    for i in range(0, count, batch):
        started = time.perf_counter()
        if batch == 1:
            answer = await client.post("/memories", json=items[i])
        else:
            answer = await client.post("/memories/batch", json={"memories": items[i : i + batch]})
        answer.raise_for_status()
        took.append((time.perf_counter() - started) * 1000)
    elapsed = time.perf_counter() - began
    after = await server_timings(client)
    return took, {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}, elapsed


async def model_alone(texts: list[str]) -> float:
    """Texts/s of the local model in this process, in the store path's parts."""
    embedder = build_embedder(Settings(embedding_provider="local"))
    await embedder.embed(texts[:EMBED_CHUNK])  # warm-up
    began = time.perf_counter()
    for i in range(0, len(texts), EMBED_CHUNK):
        await embedder.embed(texts[i : i + EMBED_CHUNK])
    return len(texts) / (time.perf_counter() - began)


def report(name: str, took: list[float], phases: dict[str, float], memories: int) -> None:
    """One column of the phase table: milliseconds per memory."""
    requests = len(took)
    total = sum(took)
    print(f"\n{name}: {memories} memories in {requests} requests;"
          f" a request p50 {pct(took, 50):.1f} ms, p99 {pct(took, 99):.1f} ms")  # fmt: skip
    print("| phase | ms per memory | share |")
    print("|---|---|---|")
    timed = 0.0
    for phase in STORE_PHASES:
        ms = phases.get(phase, 0.0) * 1000
        timed += ms
        print(f"| {phase} | {ms / memories:.2f} | {ms / total:.0%} |")
    rest = total - timed
    print(f"| the rest | {rest / memories:.2f} | {rest / total:.0%} |")
    model = phases.get("model", 0.0) * 1000
    print(f"(the model's own time: {model / memories:.2f} ms a memory, {model / total:.0%})")


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="memories stored first")
    parser.add_argument("--singles", type=int, default=200)
    parser.add_argument("--batches", type=int, default=20, help="of 100 memories each")
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database")
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
                singles = await timed_writes(client, f"{label} s", args.singles, 1)
                batches = await timed_writes(client, f"{label} b", args.batches * 100, 100)
        texts = [t for t, _ in texts_for(f"{label} m", args.batches * 100)]
        alone = await model_alone(texts)
    print(f"{args.size:,} memories stored first; the model alone: {alone:.0f} texts/s")
    report("single stores", singles[0], singles[1], args.singles)
    report("batches of 100", batches[0], batches[1], args.batches * 100)
    rate = args.batches * 100 / batches[2]
    print(
        f"\nbatch ingest: {rate:.0f} memories/s, {rate / alone:.0%} of the model alone;"
        f" single store p50 {statistics.median(singles[0]):.1f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
