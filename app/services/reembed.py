"""Changing the embedding model of a populated database while the service keeps serving.

1. start: the target model is recorded and a second vector column of its dimension added;
2. fill: every memory's text embedded by the target model into that column, a batch per
   statement, resumable (a stopped run starts again where the column is still empty);
3. index: the second column's HNSW index, built concurrently (writes go on);
4. swap: in one transaction that holds writes back for a moment (reads go on), the memories
   stored since are filled, the columns and indexes swapped, the old ones dropped, and the
   target recorded as the model of the stored vectors.

Until the swap, search reads the old vectors and stores write them, as before. After it, a
server still on the old model searches by keyword only and stores its memories with their
embedding pending (migration 0019), until it is restarted on the new model, whose
backfill then embeds them: no server is ever stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.domain.errors import ConflictError
from app.domain.memory import embedding_text
from app.embeddings.base import Embedder
from app.repository.reembed import Reembedding, ReembedRepository, ToReembed

BATCH = 64


@dataclass(frozen=True, slots=True)
class ReembedStatus:
    recorded_model: str | None
    under_way: Reembedding | None
    filled: int
    total: int


Progress = Callable[[int, int], None]


# On the local cluster (docs/operations.md): the second vector column's storage is set on
# each shard by run_command_on_shards(), whose own connections wait for the locks this
# transaction's ALTER TABLE holds on the workers: it made no progress.
CITUS_REFUSAL = (
    "re-embedding runs on one PostgreSQL, not on Citus: setting the new vector column's"
    " storage on each shard waits on the re-embed's own locks (docs/operations.md). Move"
    " the memories by export and import into a cluster started with the new model"
)


class Reembedder:
    """On a connection as the database's owner (not in a transaction)."""

    def __init__(self, conn: Any, target: Embedder, batch: int = BATCH) -> None:
        self._repo = ReembedRepository(conn)
        self._conn = conn
        self._target = target
        self._batch = batch

    async def status(self) -> ReembedStatus:
        under_way = await self._repo.under_way()
        filled, total = await self._repo.progress() if under_way else (0, 0)
        return ReembedStatus(await self._repo.recorded_model(), under_way, filled, total)

    async def start(self) -> Reembedding:
        if await self._repo.distributed():
            raise ConflictError(CITUS_REFUSAL)
        if await self._repo.recorded_model() == self._target.name:
            raise ConflictError(f"the stored vectors are already {self._target.name}'s")
        return await self._repo.start(self._target.name, self._target.dim)

    async def fill(self, progress: Progress | None = None, max_batches: int | None = None) -> int:
        """Embed what has no target vector yet, in key order; the count filled. Stops after
        `max_batches` when given (a run cut short, as a restart would)."""
        filled, after, batches = 0, None, 0
        while max_batches is None or batches < max_batches:
            waiting = await self._repo.waiting(self._batch, after)
            if not waiting:
                break
            filled += await self._fill(waiting)
            after, batches = (waiting[-1].tenant_id, waiting[-1].id), batches + 1
            if progress is not None:
                progress(*await self._repo.progress())
        return filled

    async def _fill(self, items: list[ToReembed]) -> int:
        texts = [embedding_text(i.content, i.name, i.category, i.context) for i in items]
        vectors = await self._target.embed(texts)
        return await self._repo.fill(list(zip(items, vectors, strict=True)))

    async def run(self, progress: Progress | None = None) -> None:
        """Start (or resume), fill, index, fill what came meanwhile, swap."""
        await self.start()
        await self.fill(progress)
        await self._repo.build_indexes()
        await self.fill(progress)  # stored while the index was built
        async with self._conn.transaction():
            await self._repo.lock_writes()
            # The few stored since the last pass, with writes held back.
            while waiting := await self._repo.waiting(self._batch):
                await self._fill(waiting)
            await self._repo.swap(self._target.name)

    async def cancel(self) -> None:
        await self._repo.cancel()
