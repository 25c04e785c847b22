"""Recall: the memories a hook hands an agent unasked (app/domain/recall.py has the rules).
One search over the repository and its globals, then the gate, the session's exclusions and
the budget; only what is handed over counts as read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from app.config import Settings
from app.domain.compact import CompactHit, compact_hits, compact_memory, pack
from app.domain.recall import (
    FILE_RECALL_HEAD,
    RECALL_HEAD,
    RecallQuery,
    RecallRequest,
    recall_query,
)
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

    async def recall(self, request: RecallRequest) -> Recall:
        query = recall_query(request)
        if query.file is not None:
            return await self._about_file(query, query.file)
        response = await self._search.search(query.search)
        gate = self._settings.recall_gate
        passing = [
            hit
            for hit in response.hits
            if hit.vector_similarity >= gate and hit.memory.id not in query.exclude
        ]
        shown = dataclasses.replace(response, hits=passing, below_floor=0, truncated=None)
        hits = compact_hits(shown, datetime.now(UTC))
        return await self._handed(RECALL_HEAD, hits, [h.memory.id for h in passing], query)

    async def _about_file(self, query: RecallQuery, path: str) -> Recall:
        """The memories whose files name `path`: no gate, since what they are about is the
        file itself, not a guess at relevance."""
        memories = await self._search.about_file(query.search, path)
        kept = [memory for memory in memories if memory.id not in query.exclude]
        now = datetime.now(UTC)
        hits = [compact_memory(memory, now) for memory in kept]
        return await self._handed(FILE_RECALL_HEAD, hits, [m.id for m in kept], query)

    async def _handed(
        self, head: str, hits: list[CompactHit], ids: list[UUID], query: RecallQuery
    ) -> Recall:
        """What fits the budget under `head`, its reads counted."""
        budget = query.max_tokens or self._settings.recall_max_tokens
        room = budget - estimate_tokens(head) - 1  # the head line is in the budget
        packed = pack(hits, room, always_first=False)
        handed = ids[: len(packed.lines)]
        await self._search.count_reads(handed)
        if not handed:
            return Recall("", [])
        return Recall("\n".join([head, *packed.lines]), handed)
