"""What the near-duplicate check costs a store (its nearest-neighbour query): stores into
a repository of N memories, with the check and without it (its query answering nothing),
interleaved in one run on one database.

    .venv/bin/python -m bench.dedup_cost [--existing 2000] [--stores 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import httpx

from app.config import Settings
from app.logging import configure_logging
from app.main import create_app
from app.repository.memories import MemoryRepository
from bench.support import fresh_database
from bench.synthetic import memory_text

REPO = "acme/api"


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--existing", type=int, default=2000)
    parser.add_argument("--stores", type=int, default=200)
    args = parser.parse_args()
    import random

    rng = random.Random(3)
    real_nearest = MemoryRepository.nearest_each

    async def no_neighbours(self: Any, news: Any) -> list[Any]:
        return [[] for _ in news]

    times: dict[str, list[float]] = {"with the check": [], "without": []}
    async with fresh_database("agent_memory_bench_dedup") as url:
        app = create_app(Settings(database_url=url), database_url=url)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                for b in range(0, args.existing, 100):
                    items = [{"content": f"{memory_text(rng)[0]} [seed {b + i}]",
                              "source_repo": REPO} for i in range(100)]  # fmt: skip
                    (await c.post("/memories/batch", json={"memories": items})).raise_for_status()
                for i in range(args.stores):
                    for label in times:
                        MemoryRepository.nearest_each = (  # type: ignore[method-assign]
                            real_nearest if label == "with the check" else no_neighbours
                        )
                        text, kind = memory_text(rng)
                        body = {"content": f"{text} [{label} {i}]", "memory_type": kind,
                                "source_repo": REPO}  # fmt: skip
                        began = time.perf_counter()
                        (await c.post("/memories", json=body)).raise_for_status()
                        times[label].append((time.perf_counter() - began) * 1000)
    for label, ms in times.items():
        ms.sort()
        print(f"{label}: median {statistics.median(ms):.1f} ms, p95 {ms[int(len(ms) * 0.95)]:.1f}"
              f" ms ({len(ms)} stores into {args.existing} memories)")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
