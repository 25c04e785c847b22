"""Memories stored while the embedding provider was down, and their vectors filled in
later (app/services/backfill.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.repository.sql import named


@dataclass(frozen=True, slots=True)
class PendingEmbedding:
    id: UUID
    content: str
    name: str | None
    category: str | None
    context: str | None


class PendingEmbeddingRepository:
    """Memories stored while the embedding provider was down."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def pending(self, limit: int) -> list[PendingEmbedding]:
        conn = await self._uow.connection()
        rows = await conn.fetch(
            *named(
                "SELECT id, content, name, category, context FROM memories"
                " WHERE tenant_id = :tenant_id AND embedding IS NULL ORDER BY created_at"
                " LIMIT :limit",
                {"tenant_id": self._uow.tenant_id, "limit": limit},
            )
        )
        return [
            PendingEmbedding(r["id"], r["content"], r["name"], r["category"], r["context"])
            for r in rows
        ]

    async def fill(self, vectors: Sequence[tuple[UUID, Sequence[float]]]) -> int:
        conn = await self._uow.connection()
        sql = """
            WITH filled AS (
                UPDATE memories m SET embedding = v.embedding::vector
                FROM unnest(:ids::uuid[], :vectors::text[]) AS v(id, embedding)
                WHERE m.tenant_id = :tenant_id AND m.id = v.id AND m.embedding IS NULL
                  AND memory_vector_fits(:model)
                RETURNING 1
            )
            SELECT count(*) FROM filled
            """
        values = {
            "tenant_id": self._uow.tenant_id,
            "ids": [memory_id for memory_id, _ in vectors],
            # As text: the pgvector codec encodes one vector, not an array of them.
            "vectors": ["[" + ",".join(map(repr, map(float, v))) + "]" for _, v in vectors],
            "model": self._uow.embedding_model,
        }
        filled = await conn.fetchval(*named(sql, values))
        return int(filled)
