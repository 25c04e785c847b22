"""Re-embedding: the target model's vectors filled into a second column beside the live
one, then the two swapped in one short transaction (app/services/reembed.py).

Runs as the database's owner across tenants (like key management): row-level security
does not apply, and the column and indexes it adds and swaps are the schema's own. The
second column is made here, not by a migration, because its dimension is the target
model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from app.db.migrations import STORAGE_NAMES, set_storage, stored_embedding_model
from app.db.pool import on_citus
from app.domain.errors import ConflictError
from app.repository.rows import live
from app.repository.sql import hnsw_index, named

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"
# As the live ones (migrations 0003, 0010, 0040 and 0049), on the second column. The scope's
# vectors are the target's only where they fit an entry (memory_vector_indexable()): a
# larger model's are left out, and its scopes read from the rows.
_NEXT_INDEXES = {
    "memories_embedding_next_hnsw": "CREATE INDEX CONCURRENTLY memories_embedding_next_hnsw"
    f" ON memories {hnsw_index('embedding_next')}",
    "memories_scope_vectors_next_key": "CREATE INDEX CONCURRENTLY memories_scope_vectors_next_key"
    " ON memories (tenant_id, source_repo)"
    " INCLUDE (id, memory_type, trust_level, relevance_score, created_at, embedding_next,"
    " personal_to)"
    f" WHERE {live('')}"
    " AND memory_vector_indexable(tenant_id, source_repo, embedding_next)",
    "memories_incomplete_next_key": "CREATE INDEX CONCURRENTLY memories_incomplete_next_key"
    " ON memories (tenant_id, id) WHERE embedding_next IS NULL OR search_vector IS NULL",
}
_LIVE_INDEXES = {
    "memories_embedding_next_hnsw": "memories_embedding_hnsw",
    "memories_scope_vectors_next_key": "memories_scope_vectors_key",
    "memories_incomplete_next_key": "memories_incomplete_key",
}


@dataclass(frozen=True, slots=True)
class Reembedding:
    target_model: str
    dimensions: int
    started_at: datetime


@dataclass(frozen=True, slots=True)
class ToReembed:
    tenant_id: str
    id: UUID
    content: str
    name: str | None
    category: str | None
    context: str | None


class ReembedRepository:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def under_way(self) -> Reembedding | None:
        row = await self._conn.fetchrow(
            "SELECT target_model, dimensions, started_at FROM reembedding"
        )
        return Reembedding(**dict(row)) if row else None

    async def recorded_model(self) -> str | None:
        return await stored_embedding_model(self._conn)

    async def start(self, target_model: str, dimensions: int) -> Reembedding:
        """Record the target and add its column; the same target again resumes."""
        async with self._conn.transaction():
            await self._conn.execute(LOCK_TIMEOUT)
            await self._conn.execute(
                *named(
                    "INSERT INTO reembedding (target_model, dimensions)"
                    " VALUES (:target_model, :dimensions) ON CONFLICT (singleton) DO NOTHING",
                    {"target_model": target_model, "dimensions": dimensions},
                )
            )
            under_way = await self.under_way()
            assert under_way is not None
            if (under_way.target_model, under_way.dimensions) != (target_model, dimensions):
                raise ConflictError(
                    f"a re-embed to {under_way.target_model} is under way; finish it with that"
                    " model, or cancel it (agent-memory reembed --cancel)"
                )
            # No default, so adding it rewrites nothing. Stored as the live column is (in
            # the row since migration 0027), whose place it takes at the swap.
            await self._conn.execute(
                "ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding_next"
                f" vector({int(dimensions)})"
            )
            live_storage = await self._conn.fetchval(
                "SELECT attstorage::text FROM pg_attribute"
                " WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
            )
            storage = {"embedding_next": STORAGE_NAMES[live_storage]}
            for statement in set_storage(storage, await on_citus(self._conn)):
                await self._conn.execute(statement)
        return under_way

    async def distributed(self) -> bool:
        """Whether the database is a Citus coordinator's."""
        return await on_citus(self._conn)

    async def progress(self) -> tuple[int, int]:
        """Memories with the target's vector, and all memories."""
        row = await self._conn.fetchrow(
            "SELECT count(embedding_next) AS filled, count(*) AS total FROM memories"
        )
        return int(row["filled"]), int(row["total"])

    async def waiting(self, limit: int, after: tuple[str, UUID] | None = None) -> list[ToReembed]:
        """Memories without the target's vector, in key order after `after`."""
        rows = await self._conn.fetch(
            *named(
                """
                SELECT tenant_id, id, content, name, category, context FROM memories
                WHERE embedding_next IS NULL
                  AND (:after_tenant::text IS NULL
                       OR (tenant_id, id) > (:after_tenant, :after_id))
                ORDER BY tenant_id, id
                LIMIT :limit
                """,
                {
                    "after_tenant": after[0] if after else None,
                    "after_id": after[1] if after else None,
                    "limit": limit,
                },
            )
        )
        return [ToReembed(**dict(r)) for r in rows]

    async def fill(self, vectors: Sequence[tuple[ToReembed, Sequence[float]]]) -> int:
        """The target's vectors, set where none is yet; version and updated_at stay, as
        the memory itself has not changed."""
        filled = await self._conn.fetchval(
            *named(
                """
                WITH filled AS (
                    UPDATE memories m SET embedding_next = v.embedding::vector
                    FROM unnest(:tenant_ids::text[], :ids::uuid[], :embeddings::text[])
                        AS v(tenant_id, id, embedding)
                    WHERE m.tenant_id = v.tenant_id AND m.id = v.id
                      AND m.embedding_next IS NULL
                    RETURNING 1
                )
                SELECT count(*) FROM filled
                """,
                {
                    "tenant_ids": [item.tenant_id for item, _ in vectors],
                    "ids": [item.id for item, _ in vectors],
                    # As text: the pgvector codec encodes one vector, not an array of them.
                    "embeddings": [
                        "[" + ",".join(map(repr, map(float, v))) + "]" for _, v in vectors
                    ],
                },
            )
        )
        return int(filled)

    async def build_indexes(self) -> None:
        """The second column's indexes, built without blocking writes (outside any
        transaction). A build interrupted earlier left an invalid index: made again."""
        for name, create in _NEXT_INDEXES.items():
            valid = await self._conn.fetchval(
                *named(
                    "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(:name)",
                    {"name": name},
                )
            )
            if valid:
                continue
            if valid is not None:
                await self._conn.execute(f"DROP INDEX CONCURRENTLY {name}")
            await self._conn.execute(create)

    async def lock_writes(self) -> None:
        """In the caller's transaction: writes wait from here to its end; reads go on."""
        await self._conn.execute(LOCK_TIMEOUT)
        await self._conn.execute("LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE")

    async def swap(self, target_model: str) -> None:
        """In the caller's transaction, after lock_writes and the last fill: the target's
        column and indexes become the live ones, the old ones go, and the target becomes
        the recorded model. Renames and drops only: no row is rewritten."""
        statements = [
            "ALTER TABLE memories RENAME COLUMN embedding TO embedding_previous",
            "ALTER TABLE memories RENAME COLUMN embedding_next TO embedding",
            *(f"DROP INDEX {live}" for live in _LIVE_INDEXES.values()),
            *(f"ALTER INDEX {new} RENAME TO {live}" for new, live in _LIVE_INDEXES.items()),
            "ALTER TABLE memories DROP COLUMN embedding_previous",
            "DELETE FROM reembedding",
        ]
        for statement in statements:
            await self._conn.execute(statement)
        await self._conn.execute(
            *named(
                "INSERT INTO embedding_model (name) VALUES (:name) ON CONFLICT (singleton)"
                " DO UPDATE SET name = EXCLUDED.name, recorded_at = now()",
                {"name": target_model},
            )
        )

    async def cancel(self) -> None:
        async with self._conn.transaction():
            await self._conn.execute(LOCK_TIMEOUT)
            for name in _NEXT_INDEXES:
                await self._conn.execute(f"DROP INDEX IF EXISTS {name}")
            await self._conn.execute("ALTER TABLE memories DROP COLUMN IF EXISTS embedding_next")
            await self._conn.execute("DELETE FROM reembedding")
