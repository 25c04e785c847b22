"""Hybrid search: one statement (app/repository/search_statement.py), run with its settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

import asyncpg

from app.db.unit_of_work import UnitOfWork
from app.domain.errors import SearchTimeoutError
from app.domain.filters import MemoryFilter
from app.domain.search import SearchHit
from app.repository.rows import to_memory
from app.repository.search_statement import SearchParams, SearchStatement, search_statement


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

    def statement(self, f: MemoryFilter, p: SearchParams) -> SearchStatement:
        uow = self._uow
        return search_statement(uow.tenant_id, f, p, uow.distributed, uow.embedding_model)

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
        sql, args = self.statement(f, p).compiled()
        conn = await self._uow.connection(self._settings(timeout_ms))
        try:
            rows = await conn.fetch(sql, *args)
        except asyncpg.QueryCanceledError as exc:
            raise SearchTimeoutError(
                f"the search took longer than {timeout_ms} ms and was stopped; "
                "a shorter or more specific query is cheaper"
            ) from exc
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
        counts = rows[0]
        return SearchOutcome(
            hits,
            int(counts["keyword_candidates"]),
            int(counts["vector_candidates"]),
            int(counts["below_floor"]),
            bool(counts["vectors_fit"]),
            list(counts["quarantined_ids"]),
        )

    async def explain(self, f: MemoryFilter, p: SearchParams) -> list[str]:
        """EXPLAIN (ANALYZE, BUFFERS) of the statement as `search` sends it (planned the
        same way: a generic plan on one PostgreSQL)."""
        sql, args = self.statement(f, p).compiled()
        conn = await self._uow.connection(self._settings(0))
        rows = await conn.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql, *args)
        return [row[0] for row in rows]
