"""What dashboards read: counts, health signals, the most used memories, the next prune."""

from __future__ import annotations

from typing import Any

from app.config import Settings
from app.db.session import UnitOfWork
from app.repository.stats import StatsRepository
from app.services.lifecycle import prune_rules

BACKFILL_HINT = (
    "Rows missing an embedding are keyword-searchable only; re-store them (POST /memories with "
    "the same content reinforces and fills the embedding). Rows missing search_vector predate "
    "the trigger: `UPDATE memories SET content = content` re-runs it."
)


class StatsService:
    def __init__(self, uow: UnitOfWork, settings: Settings) -> None:
        self._repo = StatsRepository(uow)
        self._settings = settings

    async def stats(self, source_repo: str | None) -> dict[str, Any]:
        raw = await self._repo.collect(source_repo, prune_rules(self._settings))
        counts = raw["counts"]
        total = next(
            (c for c in counts if c["by_type"] and c["by_trust"] and c["by_confidence"]), None
        )

        def grouped(flag: str, key: str) -> dict[str, int]:
            return {c[key]: c["total"] for c in counts if not c[flag] and c[key] is not None}

        totals = total or {}
        top: dict[str, list[dict[str, Any]]] = {}
        for row in raw["top_accessed"]:
            top.setdefault(row.pop("memory_type"), []).append(row)
        missing_embedding = totals.get("missing_embedding", 0)
        missing_search_vector = totals.get("missing_search_vector", 0)
        return {
            "source_repo": source_repo,
            "total": totals.get("total", 0),
            "by_memory_type": grouped("by_type", "memory_type"),
            "by_trust_level": grouped("by_trust", "trust_level"),
            "by_confidence": grouped("by_confidence", "confidence"),
            "active": totals.get("active", 0),
            "archived": totals.get("archived", 0),
            "superseded": totals.get("superseded", 0),
            "pinned": totals.get("pinned", 0),
            "health": {
                "missing_embedding": missing_embedding,
                "missing_search_vector": missing_search_vector,
                "integrity_failures": totals.get("quarantined", 0),
                "hint": BACKFILL_HINT if missing_embedding or missing_search_vector else None,
            },
            "top_accessed": top,
            "next_prune": {
                "would_archive": totals.get("prunable", 0),
                "rules": {
                    "unused_days": self._settings.prune_unused_days,
                    "stale_days": self._settings.prune_stale_days,
                    "stale_min_accesses": self._settings.prune_stale_min_accesses,
                },
            },
        }
