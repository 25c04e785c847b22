"""Recall: the memories a hook hands an agent unasked (app/domain/recall.py has the rules).
One search over the repository and its globals, then the gate, the session's exclusions and
the budget; only what is handed over counts as read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from app.config import Settings
from app.domain.compact import compact_hits, pack
from app.domain.recall import RECALL_HEAD, RecallDraft, recall_query
from app.domain.text import estimate_tokens
from app.services.search import SearchService


@dataclass(frozen=True, slots=True)
class Recall:
    text: str  # empty when nothing cleared the gate
    ids: list[UUID]


class RecallService:
    def __init__(self, search: SearchService, settings: Settings) -> None:
        self._search = search
        self._settings = settings

    async def recall(self, draft: RecallDraft) -> Recall:
        query = recall_query(draft)
        response = await self._search.search(query.search)
        gate = self._settings.recall_gate
        passing = [
            hit
            for hit in response.hits
            if hit.vector_similarity >= gate and hit.memory.id not in query.exclude
        ]
        budget = query.max_tokens or self._settings.recall_max_tokens
        room = budget - estimate_tokens(RECALL_HEAD) - 1  # the head line is in the budget
        shown = dataclasses.replace(response, hits=passing, below_floor=0, truncated=None)
        packed = pack(compact_hits(shown, datetime.now(UTC)), room, always_first=False)
        handed = [hit.memory.id for hit in passing[: len(packed.lines)]]
        await self._search.count_reads(handed)
        if not handed:
            return Recall("", [])
        return Recall("\n".join([RECALL_HEAD, *packed.lines]), handed)
