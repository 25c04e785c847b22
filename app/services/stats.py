"""What dashboards read: counts, health signals, the most used memories, the next prune."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from typing import Any

from app.config import Settings
from app.db.unit_of_work import UnitOfWork
from app.domain.inputs.memories import source_repo_filter
from app.domain.principal import Principal
from app.repository.stats import DAYS_CHARTED, StatsRepository
from app.services.lifecycle import prune_rules

# How many repositories a stats answer lists (`repositories` counts them all).
REPOSITORIES_SHOWN = 20

BACKFILL_HINT = (
    "Rows missing an embedding are keyword-searchable only; re-store them (POST /memories with "
    "the same content reinforces and fills the embedding). Rows missing search_vector predate "
    "the trigger: `UPDATE memories SET content = content` re-runs it."
)


class StatsService:
    def __init__(self, uow: UnitOfWork, settings: Settings, actor: Principal) -> None:
        self._repo = StatsRepository(uow)
        self._settings = settings
        self._actor = actor

    async def stats(self, source_repo: str | None) -> dict[str, Any]:
        self._actor.require("observe")
        source_repo = source_repo_filter(source_repo)
        raw = await self._repo.collect(source_repo, prune_rules(self._settings))
        rows = raw["counts"]
        combos = [c for c in rows if not c["per_repository"]]
        totals: Counter[str] = Counter()
        by_type: Counter[str] = Counter()
        by_trust: Counter[str] = Counter()
        by_confidence: Counter[str] = Counter()
        for combo in combos:
            by_type[combo["memory_type"]] += combo["total"]
            by_trust[combo["trust_level"]] += combo["total"]
            by_confidence[combo["confidence"]] += combo["total"]
            totals.update({k: v for k, v in combo.items() if type(v) is int})
        top: dict[str, list[dict[str, Any]]] = {}
        for row in raw["top_accessed"]:
            top.setdefault(row.pop("memory_type"), []).append(row)
        missing_embedding = raw["incomplete"]["missing_embedding"]
        missing_search_vector = raw["incomplete"]["missing_search_vector"]
        return {
            "source_repo": source_repo,
            "total": totals.get("total", 0),
            "by_memory_type": dict(by_type),
            "by_trust_level": dict(by_trust),
            "by_confidence": dict(by_confidence),
            "active": totals.get("active", 0),
            "archived": totals.get("archived", 0),
            "superseded": totals.get("superseded", 0),
            "pinned": totals.get("pinned", 0),
            "quarantined": totals.get("quarantined", 0),
            "held": totals.get("held", 0),
            "repositories": sum(1 for r in rows if r["per_repository"]),
            "by_repository": by_repository(rows),
            "recent_days": last_days(raw["stored_by_day"], raw["sessions_by_day"], raw["today"]),
            "health": {
                "missing_embedding": missing_embedding,
                "missing_search_vector": missing_search_vector,
                "integrity_failures": raw["quarantined"],
                "hint": BACKFILL_HINT if missing_embedding or missing_search_vector else None,
                # The model the stored vectors come from (the whole database's).
                "embedding_model": raw["embedding_model"],
                # A change of model under way (agent-memory reembed): its target, and how
                # many of these memories have the target's vector.
                "reembedding": raw["reembedding"],
            },
            "top_accessed": top,
            "next_prune": {
                "would_archive": raw["prunable"],
                "rules": {
                    "unused_days": self._settings.prune_unused_days,
                    "stale_days": self._settings.prune_stale_days,
                    "stale_min_accesses": self._settings.prune_stale_min_accesses,
                },
            },
        }


def by_repository(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The repositories with the most memories (null: the global ones), most first."""
    repos = [r for r in rows if r["per_repository"]]
    repos.sort(key=lambda r: (-r["total"], r["source_repo"] or ""))
    return [
        {"source_repo": r["source_repo"], "total": r["total"], "active": r["active"]}
        for r in repos[:REPOSITORIES_SHOWN]
    ]


def last_days(
    stored_by_day: list[dict[str, Any]], sessions: list[dict[str, Any]], today: date
) -> list[dict[str, Any]]:
    """Each charted day (UTC), oldest first: the memories stored and the sessions started."""
    stored = {r["stored_on"]: r["stored"] for r in stored_by_day}
    started = {s["started_on"]: s["sessions"] for s in sessions}
    days = [(today - timedelta(days=n)).isoformat() for n in range(DAYS_CHARTED - 1, -1, -1)]
    return [{"day": d, "stored": stored.get(d, 0), "sessions": started.get(d, 0)} for d in days]
