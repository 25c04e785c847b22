"""Hybrid search over memories."""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from uuid import UUID

import asyncpg

from app.config import Settings, limits_of
from app.db.pool import WarmUp
from app.db.pool import search_settings as db_search_settings
from app.db.unit_of_work import UnitOfWork
from app.domain.filters import FilterRequest, MemoryFilter
from app.domain.inputs.search import SearchQuery, SearchRequest, search_query
from app.domain.memory import Memory
from app.domain.principal import Principal
from app.domain.recall import RecallRequest, recall_query
from app.domain.search import SearchHit
from app.domain.secrets.find import redact_for_log
from app.domain.validation import Limits
from app.embeddings.base import Embedder, EmbeddingError
from app.repository.memories import MemoryRepository
from app.repository.search import SearchOutcome, SearchRepository, warm_up
from app.repository.search_statement import SearchParams, SearchStatement
from app.services.audit import AuditTrail
from app.services.filters import require_known_types
from app.telemetry import Telemetry

logger = logging.getLogger("agent_memory.search")

RECENT_NOTE = "empty query: the most recent memories, newest first (no ranking)"
# Every match fell below the relevance floor: said, so that "nothing" reads as an answer.
NO_GOOD_MATCH = "no good match: no memory matches this query well"


@dataclass(frozen=True, slots=True)
class SearchResponse:
    hits: list[SearchHit]
    alpha: float
    took_ms: float
    degraded: str | None = None
    # Set when the query had more distinct words than a search reads.
    truncated: str | None = None
    # Matches left out below the relevance floor.
    below_floor: int = 0
    # How the results were chosen when it is not a ranking ("the most recent first").
    note: str | None = None


class SearchService:
    def __init__(
        self,
        uow: UnitOfWork,
        embedder: Embedder,
        settings: Settings,
        telemetry: Telemetry,
        actor: Principal,
        limits: Limits,
    ) -> None:
        self._uow = uow
        self._repo = SearchRepository(uow)
        self._embedder = embedder
        self._settings = settings
        self._telemetry = telemetry
        self._actor = actor
        self._limits = limits

    async def search(self, request: SearchRequest) -> SearchResponse:
        self._actor.require("read")
        query = search_query(request, self._limits)
        await require_known_types(self._uow, query.filter)
        return await self.run(query)

    async def about_file(self, request: SearchRequest, path: str) -> list[Memory]:
        """The memories in the draft's scope (its repository and the global ones) whose
        files name `path`, at most `request.limit`."""
        self._actor.require("read")
        query = search_query(request, self._limits)
        return await self._repo.about_file(query.filter, path, query.limit)

    async def count_reads(self, ids: list[UUID]) -> None:
        if ids:
            await self._repo.count_reads(ids)

    async def _params(self, query: SearchQuery) -> tuple[SearchParams, str | None]:
        """The statement's parameters, the query embedded; and why the search is
        keyword-only when the provider failed (None otherwise)."""
        alpha = self._settings.hybrid_alpha if query.alpha is None else query.alpha
        embedding = None
        degraded = None
        if alpha > 0:
            embed_started = time.perf_counter()
            try:
                embedding = await self._embedder.embed_one(
                    query.text, tenant=self._uow.tenant_id, interactive=True
                )
                self._telemetry.embedding_seconds(time.perf_counter() - embed_started, 1)
            except EmbeddingError as exc:
                # Memory stays usable: keyword side only, and the answer says so.
                logger.warning("query embedding failed; searching keyword-only: %s", exc)
                self._telemetry.embedding_failures.inc()
                alpha, degraded = 0.0, "keyword-only: the embedding provider is unavailable"
        return statement_params(self._settings, query, embedding, alpha), degraded

    async def explain(self, request: SearchRequest) -> tuple[SearchStatement, list[str]]:
        """The statement a search would send, with its values, and its plan as it ran
        (EXPLAIN ANALYZE, BUFFERS; accesses not counted). An admin's tool."""
        self._actor.require("admin")
        query = search_query(request, self._limits)
        params, _ = await self._params(dataclasses.replace(query, track_access=False))
        return await self._repo.explain(query.filter, params)

    async def run(self, query: SearchQuery) -> SearchResponse:
        """A validated query (the learning service builds its own for hints)."""
        started = time.perf_counter()
        if not query.text:
            return await self._most_recent(query, started)
        params, degraded = await self._params(query)
        alpha = params.alpha
        outcome = await self._repo.search(
            query.filter, params, timeout_ms=self._settings.search_timeout_ms
        )
        if outcome.quarantined:
            await AuditTrail(self._uow, self._actor).record(
                "quarantine",
                detail={"reason": "content no longer matches its hash", "found_by": "search"},
                memory_ids=outcome.quarantined,
            )
        took_ms = (time.perf_counter() - started) * 1000
        self._telemetry.searched(len(outcome.hits))
        if logger.isEnabledFor(logging.INFO):
            self._log(query, outcome, alpha, took_ms)
        if params.embedding is not None and not outcome.vectors_fit:
            alpha, degraded = (
                0.0,
                (
                    "keyword-only: the stored vectors are another model's (re-embedded); restart"
                    " this server with that model"
                ),
            )
        hits, below = outcome.hits, outcome.below_floor
        truncated = None
        if query.dropped_terms:
            truncated = (
                f"the query's first {self._limits.max_query_terms} distinct words were"
                f" searched; {query.dropped_terms} more were left out"
            )
        note = NO_GOOD_MATCH if below and not hits else None
        return SearchResponse(hits, alpha, round(took_ms, 3), degraded, truncated, below, note)

    def _log(self, query: SearchQuery, outcome: SearchOutcome, alpha: float, took: float) -> None:
        logger.info(
            "search",
            extra={
                "query": redact_for_log(query.text, keep=100),
                "alpha": alpha,
                "keyword_candidates": outcome.keyword_candidates,
                "vector_candidates": outcome.vector_candidates,
                "results": len(outcome.hits),
                "took_ms": round(took, 2),
            },
        )

    async def _most_recent(self, query: SearchQuery, started: float) -> SearchResponse:
        """An empty query asks for nothing in particular: the newest memories that pass
        the filters, and the answer says that is what they are."""
        memories = await MemoryRepository(self._uow).list(query.filter, query.limit, None)
        hits = [SearchHit(m, 0.0, 0.0, 0.0, 0.0, 0.0) for m in memories]
        took_ms = round((time.perf_counter() - started) * 1000, 3)
        return SearchResponse(hits, 0.0, took_ms, note=RECENT_NOTE)


def statement_params(
    settings: Settings, query: SearchQuery, embedding: list[float] | None, alpha: float
) -> SearchParams:
    """The search statement's parameters for a validated query, its embedding (None: none)
    and the alpha it is searched with."""
    return SearchParams(
        query=query.text,
        embedding=embedding,
        alpha=alpha,
        limit=query.limit,
        # Enough candidates per side that fusion can reorder, never fewer than asked for.
        candidates=max(settings.search_candidates, query.limit),
        term_cap=settings.keyword_term_cap,
        decay_weight=settings.decay_weight,
        strength_days=settings.decay_strength_days,
        track_access=query.track_access,
        git_branch=query.git_branch,
        branch_boost=settings.branch_boost,
        **_floor(settings, query, alpha),
    )


def _floor(settings: Settings, query: SearchQuery, alpha: float) -> dict[str, float]:
    """The relevance floor the statement applies (bench/floor.py replays it offline).
    It was chosen for hybrid scores; keyword-only scores are squared ratios to the best
    and fall much faster (docs/benchmarks.md, "What a search hands an agent")."""
    if not query.floor or not 0 < alpha < 1:
        return {}
    return {
        "floor_ratio": settings.relevance_floor_ratio,
        "floor_min": settings.relevance_floor_min,
    }


# The searches a new pooled connection runs once, before its first request (app/db/pool.py):
# each shape of search statement is prepared and planned once per connection, and a
# connection's first search cost more than its next, and each further shape more again
# (docs/benchmarks.md, issue 69). The shapes the hooks and agents
# send: a recall on a prompt and on a failure (a repository, its session), a search of a
# repository with its global memories, and of the whole tenant. Searched in no tenant's
# rows (see app/repository/search.py warm_up), so that they read nothing.
WARM_UP_TEXT = "warm up the search"
WARM_UP_REPO = "warm-up"
WARM_UP_SESSION = UUID(int=0)


def warm_up_searches(
    settings: Settings, limits: Limits, dim: int
) -> list[tuple[MemoryFilter, SearchParams]]:
    """Each shape's filter and parameters, with a unit query vector of `dim` dimensions."""
    recalls = [
        recall_query(RecallRequest(WARM_UP_TEXT, WARM_UP_REPO, purpose, session_id=WARM_UP_SESSION))
        for purpose in ("prompt", "failure")
    ]
    drafts = [
        *(recall.search for recall in recalls),
        SearchRequest(WARM_UP_TEXT, FilterRequest(source_repo=WARM_UP_REPO)),
        SearchRequest(WARM_UP_TEXT),
    ]
    embedding = [1.0] + [0.0] * (dim - 1)
    shapes = []
    for draft in drafts:
        query = search_query(draft, limits)
        alpha = settings.hybrid_alpha
        shapes.append((query.filter, statement_params(settings, query, embedding, alpha)))
    return shapes


def connection_warm_up(settings: Settings, model: str, dim: int) -> WarmUp:
    """What the pool runs on each new connection (app/db/pool.py): warm_up_searches(), as
    the search runs them, for vectors of `model` (`dim` dimensions)."""
    shapes = warm_up_searches(settings, limits_of(settings), dim)

    async def warm(conn: asyncpg.Connection, distributed: bool) -> None:
        # On Citus each transaction carries the search's settings to the workers
        # (app/startup.py, Database.transaction_settings).
        carried = db_search_settings(settings.hnsw_ef_search, settings.vector_exact_factor)
        await warm_up(
            conn,
            shapes,
            distributed=distributed,
            model=model,
            transaction_settings=carried if distributed else {},
            timeout_ms=settings.search_timeout_ms,
        )

    return warm
