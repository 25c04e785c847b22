"""Real-model vectors for bench.latency's synthetic memories, embedded once and kept.

An HNSW graph over `hash` vectors does not behave like one over embeddings, but embedding
a million memories takes this machine about 40 minutes. The vectors of the texts that
`bulk_load` draws (one seeded sequence) are therefore written once, in parts of 50,000, to
`$BENCH_DATA_DIR/vectors/<model>/`; an interrupted run resumes at the first missing part.

    BENCH_DATA_DIR=/tmp/bench-1m .venv/bin/python -m bench.vector_cache --count 1000000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from app.config import Settings
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from bench.synthetic import memory_text

PART = 50_000


def synthetic_texts(start: int) -> Iterator[tuple[str, str]]:
    """The (text, memory type) sequence `bulk_load(start=...)` stores."""
    rng = random.Random(start)
    while True:
        yield memory_text(rng)


class VectorCache:
    def __init__(self, model: str, root: Path | None = None) -> None:
        base = root or Path(os.environ.get("BENCH_DATA_DIR") or "/tmp/agent-memory-bench")
        self.directory = base / "vectors" / model

    def _part(self, index: int) -> Path:
        return self.directory / f"{index:05d}.npy"

    def holds(self, count: int) -> bool:
        return all(self._part(i).is_file() for i in range(-(-count // PART)))

    def vectors(self, offset: int, count: int) -> np.ndarray:
        """Rows offset .. offset + count of the sequence, as float32."""
        pieces, position = [], offset
        while position < offset + count:
            part = np.load(self._part(position // PART), mmap_mode="r")
            within = position % PART
            take = min(PART - within, offset + count - position)
            pieces.append(np.asarray(part[within : within + take], dtype=np.float32))
            position += take
        return np.concatenate(pieces)

    async def fill(self, count: int) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        embedder = build_embedder(Settings())
        texts = synthetic_texts(0)
        try:
            for index in range(-(-count // PART)):
                part = [next(texts)[0] for _ in range(PART)]
                if self._part(index).is_file():
                    continue
                began = time.perf_counter()
                vectors = await embedder.embed(part)
                scratch = self._part(index).with_suffix(".partial.npy")
                np.save(scratch, np.asarray(vectors, dtype=np.float16))
                scratch.rename(self._part(index))
                rate = PART / (time.perf_counter() - began)
                print(f"part {index}: {PART} vectors, {rate:.0f}/s", flush=True)
        finally:
            await embedder.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    args = parser.parse_args()
    configure_logging("WARNING")
    cache = VectorCache(Settings().embedding_model)
    asyncio.run(cache.fill(args.count))


if __name__ == "__main__":
    main()
