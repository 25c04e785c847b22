"""Storing and managing memories."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from app.db.session import UnitOfWork
from app.domain.errors import NotFoundError
from app.domain.memory import Memory, NewMemory, StoreOutcome
from app.embeddings.base import Embedder, EmbeddingError
from app.repository.memories import ListFilter, MemoryRepository
from app.services.telemetry import Telemetry

logger = logging.getLogger("agent_memory.store")


class MemoryService:
    def __init__(self, uow: UnitOfWork, embedder: Embedder, telemetry: Telemetry) -> None:
        self._repo = MemoryRepository(uow)
        self._embedder = embedder
        self._telemetry = telemetry

    async def _embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        """Vectors, or None for each when the provider fails: the memory is stored anyway,
        keyword-searchable at once, its embedding pending until a backfill."""
        started = time.perf_counter()
        try:
            vectors: list[list[float] | None] = list(await self._embedder.embed(texts))
        except EmbeddingError as exc:
            logger.warning("embedding failed; storing with embedding pending: %s", exc)
            self._telemetry.embedding_failures.inc()
            return [None] * len(texts)
        self._telemetry.embedding_seconds(time.perf_counter() - started, len(texts))
        return vectors

    async def store(self, new: NewMemory) -> StoreOutcome:
        (vector,) = await self._embed([new.embedding_text()])
        result = await self._repo.upsert(new, vector)
        outcome = StoreOutcome("stored" if result.inserted else "reinforced", result.memory)
        self._telemetry.stored(outcome)
        self._log(outcome)
        return outcome

    async def store_batch(self, items: Sequence[NewMemory]) -> list[StoreOutcome]:
        # Embed everything first (no database slot held), then write in one transaction.
        vectors = await self._embed([item.embedding_text() for item in items])
        results = await self._repo.upsert_many(list(zip(items, vectors, strict=True)))
        outcomes = [
            StoreOutcome("stored" if r.inserted else "reinforced", r.memory) for r in results
        ]
        for outcome in outcomes:
            self._telemetry.stored(outcome)
            self._log(outcome)
        return outcomes

    @staticmethod
    def _log(outcome: StoreOutcome) -> None:
        memory = outcome.memory
        logger.info(
            "store",
            extra={
                "status": outcome.status,
                "memory_id": str(memory.id),
                "memory_type": memory.memory_type,
                "source_repo": memory.source_repo,
                "observation_count": memory.observation_count,
            },
        )

    async def get(self, memory_id: UUID) -> Memory:
        memory = await self._repo.get(memory_id)
        if memory is None:
            raise NotFoundError(f"memory {memory_id} not found")
        return memory

    async def delete(self, memory_id: UUID) -> None:
        if not await self._repo.delete(memory_id):
            raise NotFoundError(f"memory {memory_id} not found")

    async def list(
        self, filters: ListFilter, limit: int, after: tuple[datetime, UUID] | None
    ) -> list[Memory]:
        return await self._repo.list(filters, limit, after)
