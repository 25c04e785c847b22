"""Hybrid search over memories."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from app.config import Settings
from app.db.session import UnitOfWork
from app.embeddings.base import Embedder, EmbeddingError
from app.repository.search import SearchFilter, SearchHit, SearchParams, SearchRepository
from app.services.telemetry import Telemetry

logger = logging.getLogger("agent_memory.search")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    filters: SearchFilter
    limit: int = 10
    alpha: float | None = None
    track_access: bool = True


@dataclass(frozen=True, slots=True)
class SearchResponse:
    hits: list[SearchHit]
    alpha: float
    took_ms: float
    degraded: str | None = None


class SearchService:
    def __init__(
        self, uow: UnitOfWork, embedder: Embedder, settings: Settings, telemetry: Telemetry
    ) -> None:
        self._repo = SearchRepository(uow)
        self._embedder = embedder
        self._settings = settings
        self._telemetry = telemetry

    async def search(self, request: SearchRequest) -> SearchResponse:
        started = time.perf_counter()
        alpha = self._settings.hybrid_alpha if request.alpha is None else request.alpha
        embedding = None
        degraded = None
        if alpha > 0:
            embed_started = time.perf_counter()
            try:
                embedding = await self._embedder.embed_one(request.query)
                self._telemetry.embedding_seconds(time.perf_counter() - embed_started, 1)
            except EmbeddingError as exc:
                # Memory stays usable: keyword side only, and the answer says so.
                logger.warning("query embedding failed; searching keyword-only: %s", exc)
                self._telemetry.embedding_failures.inc()
                alpha, degraded = 0.0, "keyword-only: the embedding provider is unavailable"
        params = SearchParams(
            query=request.query,
            embedding=embedding,
            alpha=alpha,
            limit=request.limit,
            # Enough candidates per side that fusion can reorder, never fewer than asked for.
            candidates=max(self._settings.search_candidates, request.limit),
            term_cap=self._settings.keyword_term_cap,
            decay_weight=self._settings.decay_weight,
            strength_days=self._settings.decay_strength_days,
            track_access=request.track_access,
        )
        outcome = await self._repo.search(request.filters, params)
        took_ms = (time.perf_counter() - started) * 1000
        self._telemetry.searched(len(outcome.hits))
        logger.info(
            "search",
            extra={
                "query": request.query[:100],
                "alpha": alpha,
                "keyword_candidates": outcome.keyword_candidates,
                "vector_candidates": outcome.vector_candidates,
                "results": len(outcome.hits),
                "took_ms": round(took_ms, 2),
            },
        )
        return SearchResponse(outcome.hits, alpha, round(took_ms, 3), degraded)
