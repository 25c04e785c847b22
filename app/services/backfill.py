"""Fill the embeddings of memories stored while the provider was down."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.db.unit_of_work import unit_of_work
from app.domain.memory import embedding_text
from app.embeddings.base import EmbeddingError
from app.repository.pending_embeddings import PendingEmbeddingRepository

if TYPE_CHECKING:
    from app.runtime import Runtime

logger = logging.getLogger("agent_memory.backfill")

BATCH = 64


async def backfill_embeddings(runtime: Runtime, tenant_id: str, max_rows: int = 1_000) -> int:
    """Embed pending memories of one tenant, a batch per transaction; the count filled.
    Stops quietly at the first provider failure (the next run picks up where this stopped)."""
    filled = 0
    while filled < max_rows:
        async with unit_of_work(runtime.database, tenant_id, every_person=True) as uow:
            repo = PendingEmbeddingRepository(uow)
            pending = await repo.pending(min(BATCH, max_rows - filled))
            if not pending:
                break
            texts = [embedding_text(p.content, p.name, p.category, p.context) for p in pending]
            try:
                vectors = await runtime.embedder.embed(texts, tenant=tenant_id)
            except EmbeddingError as exc:
                logger.warning("backfill paused: embedding provider still failing: %s", exc)
                break
            done = await repo.fill([(p.id, v) for p, v in zip(pending, vectors, strict=True)])
        filled += done
        if done < len(pending):
            break
    if filled:
        logger.info("backfill", extra={"tenant_id": tenant_id, "filled": filled})
    return filled
