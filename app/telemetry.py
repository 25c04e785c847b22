"""Counters the services report to; /metrics reads them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal, get_args

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from app.domain.memory import StoreOutcome

# The phases of the store path (app/services/memories.py), in the order a store runs them:
# the secret screen, the exact-duplicate check, provenance, the wait for the embedding,
# taking a connection again (given back while the model ran), the near-duplicate query,
# the insert or reinforcement.
StorePhase = Literal[
    "screen", "known", "provenance", "embed_wait", "reconnect", "near_duplicates", "write"
]
STORE_PHASES: tuple[StorePhase, ...] = get_args(StorePhase)


class Telemetry:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.requests = Counter(
            "agent_memory_http_requests",
            "HTTP requests by route, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "agent_memory_http_request_duration_seconds",
            "HTTP request latency by route",
            ["route", "method"],
            buckets=(0.002, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        self.store_outcomes = Counter(
            "agent_memory_store_outcomes",
            "Memories stored, reinforced or rejected",
            ["outcome"],
            registry=self.registry,
        )
        self.search_results = Histogram(
            "agent_memory_search_results",
            "Results returned per search",
            buckets=(0, 1, 2, 5, 10, 20, 50, 100),
            registry=self.registry,
        )
        self.embed_seconds = Histogram(
            "agent_memory_embedding_duration_seconds",
            "Time spent embedding one call (query or batch)",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5),
            registry=self.registry,
        )
        # Where a write's time goes (bench.store_phases reads it): seconds summed per phase
        # of the store path, the waits included (a phase's await counts while it waits).
        self.store_phase_seconds = Counter(
            "agent_memory_store_phase_seconds",
            "Seconds the store path spent in each phase, summed over memories and requests",
            ["phase"],
            registry=self.registry,
        )
        # Each phase's child, looked up once: phase() runs several times per memory stored.
        self._phases = {name: self.store_phase_seconds.labels(name) for name in STORE_PHASES}
        self.embedded_texts = Counter(
            "agent_memory_embedded_texts", "Texts embedded", registry=self.registry
        )
        self.embedding_failures = Counter(
            "agent_memory_embedding_failures",
            "Embedding calls that failed (memories stored pending, searches keyword-only)",
            registry=self.registry,
        )
        self.prune_runs = Counter(
            "agent_memory_prune_runs", "Pruning runs that took the lock", registry=self.registry
        )
        self.pruned_memories = Counter(
            "agent_memory_pruned_memories", "Memories archived by pruning", registry=self.registry
        )
        self.pool_size = Gauge(
            "agent_memory_db_pool_connections", "Open pool connections", registry=self.registry
        )
        self.pool_idle = Gauge(
            "agent_memory_db_pool_idle_connections", "Idle pool connections", registry=self.registry
        )
        self.pool_max = Gauge(
            "agent_memory_db_pool_max_connections", "Pool capacity", registry=self.registry
        )

    @contextmanager
    def phase(self, name: StorePhase) -> Iterator[None]:
        """Time a phase of the store path."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self._phases[name].inc(time.perf_counter() - started)

    def stored(self, outcome: StoreOutcome) -> None:
        self.store_outcomes.labels(outcome.status).inc()

    def rejected(self) -> None:
        self.store_outcomes.labels("rejected").inc()

    def pruned(self, archived: int) -> None:
        self.prune_runs.inc()
        self.pruned_memories.inc(archived)

    def searched(self, results: int) -> None:
        self.search_results.observe(results)

    def embedding_seconds(self, seconds: float, texts: int) -> None:
        self.embed_seconds.observe(seconds)
        self.embedded_texts.inc(texts)
