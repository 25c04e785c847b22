"""Hybrid search: one statement (app/repository/search_statement.py), run with its settings;
it counts what it returned as read. On Citus the same statement runs on the tenant's
worker, planned there once per connection (memory_search_on_worker(), migration 0036)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import asyncpg

from app.db.unit_of_work import UnitOfWork, set_local
from app.domain.errors import SearchTimeoutError
from app.domain.filters import MemoryFilter
from app.domain.memory import Memory
from app.domain.search import SearchHit
from app.repository.filters import filter_sql
from app.repository.rows import INTACT, MEMORY_COLUMNS, from_json, to_memory
from app.repository.search_statement import (
    SearchParams,
    SearchStatement,
    counted_reads,
    search_statement,
)
from app.repository.sql import named

logger = logging.getLogger("agent_memory.search")

# A recall's reads (a search's are counted by its own statement).
_COUNT_READS = counted_reads(":ids::uuid[]")


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
        """The transaction's connection, with the search's settings, and the statement."""
        uow = self._uow
        conn = await uow.connection(self._settings(timeout_ms))
        return conn, search_statement(uow.tenant_id, f, p, uow.distributed, uow.embedding_model)

    def _settings(self, timeout_ms: int) -> dict[str, str]:
        return search_settings(self._uow.distributed, timeout_ms)

    async def search(self, f: MemoryFilter, p: SearchParams, timeout_ms: int = 0) -> SearchOutcome:
        """`timeout_ms` (0: none) cancels the statement in the server past that time:
        SearchTimeoutError, and the transaction is rolled back."""
        try:
            conn, statement = await self._statement(f, p, timeout_ms)
            rows = await fetched(conn, statement)
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

    async def about_file(self, f: MemoryFilter, path: str, limit: int) -> list[Memory]:
        """The memories in the filter's scope whose `files` name `path`, the repository's
        own before the global ones, newest first (a file recall: no query to rank by)."""
        conn = await self._uow.connection()
        values: dict[str, Any] = {"tenant_id": self._uow.tenant_id, "path": path}

        def bind(value: Any, name: str) -> str:
            values[name] = value
            return f":{name}"

        sql = (
            f"SELECT {MEMORY_COLUMNS} FROM memories m"
            f" WHERE {filter_sql(f, bind, tenant=':tenant_id')} AND {INTACT}"
            " AND m.files @> ARRAY[:path::text]"
            " ORDER BY m.source_repo IS NULL, m.created_at DESC, m.id DESC"
            f" LIMIT {bind(limit, 'row_limit')}"
        )
        return [to_memory(row) for row in await conn.fetch(*named(sql, values))]

    async def explain(self, f: MemoryFilter, p: SearchParams) -> tuple[SearchStatement, list[str]]:
        """The statement as `search` sends it, and its EXPLAIN (ANALYZE, BUFFERS), planned
        the same way: a generic plan, on one PostgreSQL or on the tenant's Citus worker
        (memory_search_on_worker())."""
        conn, statement = await self._statement(f, p)
        if statement.distributed:  # as the tenant's worker runs it
            return statement, await conn.fetchval(*named(*statement.worker_call(explain=True)))
        sql, args = statement.compiled()
        rows = await conn.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql, *args)
        return statement, [row[0] for row in rows]


def search_settings(distributed: bool, timeout_ms: int) -> dict[str, str]:
    """A search's transaction-local settings: its timeout (0: none), and its plan."""
    settings = {"statement_timeout": str(timeout_ms)}
    if not distributed:
        # Planning this statement is a fair share of a search (docs/search.md, "How search
        # works"), and its plan does not depend on the values: the parts whose plan does are
        # chosen inside its two readers on every call. So one plan per connection serves
        # every search of the same shape; and the readers' static statements (a
        # repository's nearest, migration 0053) keep theirs by this setting too. (On
        # Citus, memory_search_on_worker() keeps it so on the worker; the call itself is
        # routed by its tenant.)
        settings["plan_cache_mode"] = "force_generic_plan"
    return settings


async def fetched(conn: asyncpg.Connection, statement: SearchStatement) -> list[Mapping[str, Any]]:
    """The statement's rows: run here, or on Citus by the tenant's worker."""
    if not statement.distributed:
        sql, args = statement.compiled()
        return list(await conn.fetch(sql, *args))
    answer = await conn.fetchval(*named(*statement.worker_call()))
    return [from_json(row, quarantined_ids=_ids) for row in answer]


# The tenant a new connection's warm-up searches: no key names an empty tenant
# (app/domain/inputs/keys.py key_request), so no row is filed under it and the searches read
# nothing. (Its scope is empty, so the vector side reads it exactly, not through the graph,
# wherever memory_vector_exact_bound() is above 0: the default.)
WARM_UP_TENANT = ""


async def warm_up(
    conn: asyncpg.Connection,
    shapes: Sequence[tuple[MemoryFilter, SearchParams]],
    *,
    distributed: bool,
    model: str | None,
    transaction_settings: Mapping[str, str],
    timeout_ms: int,
) -> None:
    """Each shape's search, once, on a new connection, as a request's transaction runs it
    (app/db/unit_of_work.py) and then rolled back: its statement prepared and planned, the
    functions it calls compiled, the types it reads known to the driver, so that the
    connection's first request costs what its next does. A failure (a schema not yet
    migrated, which the start-up check then names) leaves the connection as it was."""
    for f, p in shapes:
        statement = search_statement(WARM_UP_TENANT, f, p, distributed, model)
        transaction = conn.transaction()
        await transaction.start()
        try:
            local = {**transaction_settings, "app.tenant_id": WARM_UP_TENANT}
            await set_local(conn, {**local, **search_settings(distributed, timeout_ms)})
            await fetched(conn, statement)
        except asyncpg.PostgresError as exc:
            logger.warning("a new connection's search warm-up failed: %s", exc)
            return
        finally:
            await transaction.rollback()


def _ids(values: list[str]) -> list[UUID]:
    return [UUID(value) for value in values]
