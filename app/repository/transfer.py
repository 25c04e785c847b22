"""Reading a tenant's memories out whole, and writing imported ones back with their history."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any
from uuid import UUID

from app.db.session import UnitOfWork
from app.domain.memory import Memory
from app.domain.transfer import ImportedMemory
from app.repository.memories import MERGED_TAGS
from app.repository.rows import MEMORY_COLUMNS, to_memory

# Oldest first, so that a file reads like the memory's history.
_EXPORT = f"""
SELECT {MEMORY_COLUMNS}, CASE WHEN $3 THEN m.embedding END AS vector
FROM memories m
WHERE m.tenant_id = $1 AND ($2::text IS NULL OR m.source_repo = $2)
ORDER BY m.created_at, m.id
"""

# The file's id ($17) where it is free here (see taken), a new one otherwise. Known
# content (the dedup key) is reinforced as a store would, but an import is no new
# observation of an archived memory: it stays archived. The vector is kept only by a
# server of the recorded model, as in a store (migration 0019).
_IMPORT = f"""
INSERT INTO memories AS m (
    tenant_id, id, content, content_hash, memory_type, category, tags, source_repo, task_id,
    trust_level, confidence, pinned, source, name, metadata, embedding, created_by_key,
    context, context_hash, observation_count, relevance_score, access_count,
    last_accessed_at, archived_at, quarantined_at, created_at
)
VALUES (
    $1, coalesce($17::uuid, uuidv7()),
    $2, memory_content_hash($2), $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
    memory_vector_if_fits($14, $25), $15,
    $16, memory_content_hash($16), $18, $19, $20, $21, $22, $23, coalesce($24, now())
)
ON CONFLICT (tenant_id, source_repo, content_hash) DO UPDATE SET
    observation_count = m.observation_count + 1,
    tags = {MERGED_TAGS.format(incoming="EXCLUDED.tags")},
    embedding = coalesce(m.embedding, EXCLUDED.embedding),
    version = m.version + 1,
    updated_at = EXCLUDED.updated_at
RETURNING m.id, (xmax = 0) AS inserted
"""

# Links whose target is in this tenant; a link already in place is left as it is.
_LINK = """
WITH links AS (
    SELECT l.id, l.superseded_by FROM unnest($2::uuid[], $3::uuid[]) AS l(id, superseded_by)
),
resolved AS (
    SELECT l.id, l.superseded_by FROM links l
    WHERE EXISTS (SELECT 1 FROM memories t WHERE t.tenant_id = $1 AND t.id = l.superseded_by)
),
changed AS (
    UPDATE memories m SET superseded_by = r.superseded_by, version = m.version + 1,
                          updated_at = now()
    FROM resolved r
    WHERE m.tenant_id = $1 AND m.id = r.id AND m.superseded_by IS DISTINCT FROM r.superseded_by
    RETURNING m.id
)
SELECT (SELECT count(*) FROM resolved) AS resolved, (SELECT count(*) FROM changed) AS changed
"""


class TransferRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    @property
    def tenant_id(self) -> str:
        return self._uow.tenant_id

    async def count(self, source_repo: str | None) -> int:
        conn = await self._uow.connection()
        counted = await conn.fetchval(
            "SELECT count(*) FROM memories m"
            " WHERE m.tenant_id = $1 AND ($2::text IS NULL OR m.source_repo = $2)",
            self.tenant_id,
            source_repo,
        )
        return int(counted)

    async def stream(
        self, source_repo: str | None, with_embeddings: bool
    ) -> AsyncIterator[tuple[Memory, list[float] | None]]:
        """Every memory (archived and superseded too), read through a cursor so that a
        large tenant is never held in memory whole."""
        conn = await self._uow.connection()
        async for row in conn.cursor(
            _EXPORT, self.tenant_id, source_repo, with_embeddings, prefetch=256
        ):
            vector = row["vector"]
            yield to_memory(row), (None if vector is None else vector.to_list())

    async def taken(self, ids: Sequence[UUID]) -> set[UUID]:
        """Which of these ids this tenant's memories already have (one statement for a
        chunk of lines; a subquery inside the INSERT would be one per line, and Citus
        routes no INSERT with a subquery)."""
        if not ids:
            return set()
        conn = await self._uow.connection()
        rows = await conn.fetch(
            "SELECT m.id FROM memories m WHERE m.tenant_id = $1 AND m.id = ANY($2::uuid[])",
            self.tenant_id,
            list(ids),
        )
        return {r["id"] for r in rows}

    async def insert(
        self, item: ImportedMemory, embedding: Sequence[float] | None, memory_id: UUID | None
    ) -> tuple[UUID, bool]:
        """The memory's id here (`memory_id`, or a new one when None), and whether it was
        new (False: known content reinforced)."""
        conn = await self._uow.connection()
        new, state = item.new, item.state
        args: tuple[Any, ...] = (
            self.tenant_id, new.content, new.memory_type, new.category, list(new.tags),
            new.source_repo, new.task_id, new.trust_level, new.confidence, new.pinned,
            new.source, new.name, new.metadata, embedding, self._uow.key_id, new.context,
            memory_id, state.observation_count, state.relevance_score,
            state.access_count, state.last_accessed_at, state.archived_at,
            state.quarantined_at, state.created_at, self._uow.embedding_model,
        )  # fmt: skip
        row = await conn.fetchrow(_IMPORT, *args)
        return row["id"], row["inserted"]

    async def link(self, links: Sequence[tuple[UUID, UUID]]) -> int:
        """Set each (memory, superseded_by) whose target exists; returns how many did."""
        if not links:
            return 0
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            _LINK, self.tenant_id, [a for a, _ in links], [b for _, b in links]
        )
        return int(row["resolved"])
