"""Hybrid search: one statement (app/repository/search_statement.py), run with its settings,
then one that counts what it returned as read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from uuid import UUID

import asyncpg

from app.db.unit_of_work import UnitOfWork
from app.domain.errors import SearchTimeoutError
from app.domain.filters import MemoryFilter
from app.domain.search import SearchHit
from app.repository.rows import to_memory
from app.repository.search_statement import (
    Postings,
    SearchParams,
    SearchStatement,
    keyword_postings_statement,
    search_statement,
)
from app.repository.sql import named

# The returned memories' reads, counted beside them (migration 0030), never in their rows.
# A memory deleted since the search read it is skipped; the ones counted are kept from
# deletion (KEY SHARE) until the search commits. In id order: concurrent searches counting
# the same memories in other orders would otherwise deadlock on their access rows.
_COUNT_READS = """
INSERT INTO memory_access AS a (tenant_id, memory_id, access_count, last_accessed_at)
SELECT m.tenant_id, m.id, 1, now() FROM memories m
WHERE m.tenant_id = :tenant_id AND m.id = ANY (:ids::uuid[])
ORDER BY m.id
FOR KEY SHARE
ON CONFLICT (tenant_id, memory_id) DO UPDATE
    SET access_count = a.access_count + 1, last_accessed_at = EXCLUDED.last_accessed_at
RETURNING a.memory_id, a.access_count, a.last_accessed_at
"""


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[SearchHit]
    keyword_candidates: int
    vector_candidates: int
    below_floor: int = 0
    vectors_fit: bool = True  # false: the stored vectors are another model's
    # Rows this search found altered behind the API's back, and marked quarantined.
    quarantined: list[UUID] = field(default_factory=list)


class SearchRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def _statement(
        self, f: MemoryFilter, p: SearchParams, timeout_ms: int = 0
    ) -> tuple[asyncpg.Connection, SearchStatement]:
        """The transaction's connection, with the search's settings, and the statement. On
        Citus the keyword hits are read first, on the tenant's worker, and bound into it."""
        uow = self._uow
        conn = await uow.connection(self._settings(timeout_ms))
        postings: Postings | None = None
        if uow.distributed and p.alpha < 1:
            sql, args = keyword_postings_statement(uow.tenant_id, f, p).compiled()
            postings = await conn.fetchval(sql, *args)
        statement = search_statement(
            uow.tenant_id, f, p, uow.distributed, uow.embedding_model, postings
        )
        return conn, statement

    def _settings(self, timeout_ms: int) -> dict[str, str]:
        settings = {"statement_timeout": str(timeout_ms)}
        if not self._uow.distributed:
            # Planning this statement costs about 2 ms, a fifth of a search at 10k rows, and
            # its plan does not depend on the values: the one part whose plan does, the
            # vector side, is planned inside memory_vector_candidates() on every call. So
            # one plan per connection serves every search of the same shape. (Citus plans
            # no generic plan it could route: its values pick the shard.)
            settings["plan_cache_mode"] = "force_generic_plan"
        return settings

    async def search(self, f: MemoryFilter, p: SearchParams, timeout_ms: int = 0) -> SearchOutcome:
        """`timeout_ms` (0: none) cancels the statement in the server past that time:
        SearchTimeoutError, and the transaction is rolled back."""
        try:
            conn, statement = await self._statement(f, p, timeout_ms)
            sql, args = statement.compiled()
            rows = await conn.fetch(sql, *args)
            hits = [
                SearchHit(
                    memory=to_memory(row),
                    score=float(row["score"]),
                    similarity=float(row["similarity"]),
                    vector_similarity=float(row["vector_similarity"]),
                    keyword_score=float(row["keyword_score"]),
                    decayed_score=float(row["decayed_score"]),
                )
                for row in rows
                if row["id"] is not None  # the counts' row when nothing is returned
            ]
            if p.track_access and hits:
                hits = await self._count_reads(conn, hits)
        except asyncpg.QueryCanceledError as exc:
            raise SearchTimeoutError(
                f"the search took longer than {timeout_ms} ms and was stopped; "
                "a shorter or more specific query is cheaper"
            ) from exc
        counts = rows[0]
        return SearchOutcome(
            hits,
            int(counts["keyword_candidates"]),
            int(counts["vector_candidates"]),
            int(counts["below_floor"]),
            bool(counts["vectors_fit"]),
            list(counts["quarantined_ids"]),
        )

    async def count_reads(self, ids: list[UUID]) -> None:
        """Reads counted for memories handed over outside a search's answer (a recall)."""
        conn = await self._uow.connection()
        await conn.fetch(*named(_COUNT_READS, {"tenant_id": self._uow.tenant_id, "ids": ids}))

    async def _count_reads(
        self, conn: asyncpg.Connection, hits: list[SearchHit]
    ) -> list[SearchHit]:
        """The hits with their access counts as this search left them."""
        values = {"tenant_id": self._uow.tenant_id, "ids": [hit.memory.id for hit in hits]}
        counted = {
            row["memory_id"]: (row["access_count"], row["last_accessed_at"])
            for row in await conn.fetch(*named(_COUNT_READS, values))
        }
        updated = []
        for hit in hits:
            if hit.memory.id in counted:
                reads, last_read = counted[hit.memory.id]
                memory = dataclasses.replace(
                    hit.memory, access_count=reads, last_accessed_at=last_read
                )
                hit = dataclasses.replace(hit, memory=memory)
            updated.append(hit)
        return updated

    async def explain(self, f: MemoryFilter, p: SearchParams) -> tuple[SearchStatement, list[str]]:
        """The statement as `search` sends it, and its EXPLAIN (ANALYZE, BUFFERS) (planned
        the same way: a generic plan on one PostgreSQL)."""
        conn, statement = await self._statement(f, p)
        sql, args = statement.compiled()
        rows = await conn.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql, *args)
        return statement, [row[0] for row in rows]
