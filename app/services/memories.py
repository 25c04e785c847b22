"""Storing and managing memories."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Literal, TypeVar
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.duplicates import Verdict, Written, judge, nearest_with, unit
from app.domain.errors import ConflictError, InvalidInputError, NotFoundError
from app.domain.filters import MemoryFilter
from app.domain.id_prefix import id_prefix
from app.domain.inputs.listing import ListRequest, encode_cursor, list_query
from app.domain.inputs.memories import MemoryRequest, new_memories, new_memory
from app.domain.memory import Memory, NewMemory, StoreOutcome
from app.domain.people import require_person_for_personal
from app.domain.principal import Principal
from app.domain.provenance import Exposure, Hold, dangerous_instruction, hold_for
from app.domain.secrets.screen import memory_text_size, screen_memory
from app.domain.validation import Limits
from app.embeddings.base import Embedder, EmbeddingError
from app.repository.memories import MemoryRepository, UpsertResult
from app.repository.sessions import SessionRepository
from app.services.audit import AuditTrail
from app.services.filters import require_known_types
from app.telemetry import Telemetry

logger = logging.getLogger("agent_memory.store")
T = TypeVar("T")
# Texts' vectors under way (None where there is no text, or the provider failed).
Embedding = asyncio.Future[list[list[float] | None]]

# A large batch is embedded this many texts at a time, each part while the one before it
# is written (embedded_ahead), so that the model's cores and the database's work overlap.
EMBED_CHUNK = 64
# Text screened for secrets on the event loop; more goes to a worker thread (what it costs:
# docs/benchmarks.md, "The secret screen").
SCREEN_INLINE_CHARS = 20_000
# Text read for dangerous instructions on the event loop (a crafted long text is slow:
# docs/benchmarks.md, "Commands that fetch and run code"); more goes to a worker thread.
RULE_INLINE_CHARS = 2_000
# Supersede links followed each way for a memory's history.
MAX_LINEAGE = 20


# How many of the ids an ambiguous prefix stands for a refusal names.
AMBIGUOUS_SHOWN = 5


class MemoryService:
    def __init__(
        self,
        uow: UnitOfWork,
        embedder: Embedder,
        telemetry: Telemetry,
        actor: Principal,
        limits: Limits,
    ) -> None:
        self._uow = uow
        self._repo = MemoryRepository(uow)
        self._embedder = embedder
        self._telemetry = telemetry
        self.actor = actor
        self.limits = limits

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def validate(self, request: MemoryRequest) -> NewMemory:
        """The request as a memory this caller may write, or the reason it may not."""
        self.actor.require("write")
        try:
            new = new_memory(request, self.limits)
        except InvalidInputError:
            self._telemetry.rejected()
            raise
        self.actor.require_trust(new.trust_level)
        return new

    async def store(self, request: MemoryRequest) -> StoreOutcome:
        return await self.store_new(self.validate(request))

    async def store_batch(self, drafts: Sequence[MemoryRequest]) -> list[StoreOutcome]:
        """All or nothing: one bad item and nothing of the batch is written."""
        self.actor.require("write")
        try:
            items = new_memories(drafts, self.limits)
        except InvalidInputError:
            self._telemetry.rejected()
            raise
        for item in items:
            self.actor.require_trust(item.trust_level)
        return await self.store_many(await self.screened(items, batch=True), screened=True)

    async def screened(self, items: Sequence[NewMemory], *, batch: bool = False) -> list[NewMemory]:
        """The secret screen (app.domain.secrets) over each item (a batch's refusals name
        the item); a large batch is read in a worker thread, so the event loop keeps
        serving meanwhile."""
        policy = self.limits.secrets_policy

        def screen_all() -> list[NewMemory]:
            if not batch:
                return [screen_memory(m, policy) for m in items]
            return [screen_memory(m, policy, f"memories.{i}.") for i, m in enumerate(items)]

        try:
            with self._telemetry.phase("screen"):
                if sum(memory_text_size(m) for m in items) > SCREEN_INLINE_CHARS:
                    return await asyncio.to_thread(screen_all)
                return screen_all()
        except InvalidInputError:
            self._telemetry.rejected()
            raise

    async def vectors_for(self, texts: Sequence[str]) -> list[list[float] | None]:
        """Vectors, or None for each when the provider fails: the memory is stored anyway,
        keyword-searchable at once, its embedding pending until a backfill."""
        if not texts:
            return []
        started = time.perf_counter()
        try:
            vectors: list[list[float] | None] = list(
                await self._embedder.embed(texts, tenant=self._uow.tenant_id)
            )
        except EmbeddingError as exc:
            logger.warning("embedding failed; storing with embedding pending: %s", exc)
            self._telemetry.embedding_failures.inc()
            return [None] * len(texts)
        self._telemetry.embedding_seconds(time.perf_counter() - started, len(texts))
        return vectors

    async def embedded_ahead(
        self,
        chunks: AsyncIterable[Sequence[T]],
        text: Callable[[T], str | None],
        first: Embedding | None = None,
    ) -> AsyncGenerator[tuple[Sequence[T], list[list[float] | None]], None]:
        """Each chunk with a vector for each item (None where `text` gives none, or the
        provider failed), the next chunk's embedding under way while the caller writes this
        one, so that the model's cores and the database's work overlap. `first`: the first
        chunk's embedding, started by the caller (embedding()). Close it with
        contextlib.aclosing: an embedding still running is cancelled."""
        pending: tuple[Sequence[T], Embedding] | None = None

        def embed(chunk: Sequence[T]) -> Embedding:
            return self.embedding([text(item) for item in chunk])

        try:
            async for chunk in chunks:
                started = first if first is not None else embed(chunk)
                first = None
                if pending is not None:
                    with self._telemetry.phase("embed_wait"):
                        vectors = await pending[1]
                    yield pending[0], vectors
                pending = (chunk, started)
            if pending is not None:
                with self._telemetry.phase("embed_wait"):
                    vectors = await pending[1]
                yield pending[0], vectors
        finally:
            if pending is not None:
                pending[1].cancel()  # after a failed write; a no-op once it is done

    def embedding(self, texts: Sequence[str | None]) -> Embedding:
        """The texts' vectors, under way (None for a None text): the model runs while the
        caller does the work that does not need them."""
        return asyncio.ensure_future(self._vectors_of(texts))

    async def _vectors_of(self, texts: Sequence[str | None]) -> list[list[float] | None]:
        wanted = [text for text in texts if text is not None]
        made = iter(await self.vectors_for(wanted))
        return [next(made) if text is not None else None for text in texts]

    async def reembed(self, memory: Memory) -> Memory:
        """After an edit of what the embedding reads (the category): a fresh vector, or
        pending (for the backfill) when the provider fails."""
        (vector,) = await self.vectors_for([memory.embedding_text()])
        updated = await self._repo.set_embedding(memory.id, vector)
        return updated or memory

    async def store_new(self, new: NewMemory) -> StoreOutcome:
        """A memory the caller has already validated (the learning services build them)."""
        (outcome,) = await self.store_many([new])
        return outcome

    async def store_many(
        self, items: Sequence[NewMemory], *, screened: bool = False
    ) -> list[StoreOutcome]:
        """In input order, in one transaction. What is already stored with an embedding is
        reinforced, and only the rest is embedded and upserted (a batch's known memories
        cost no model call). Every memory, whichever door or service made it, passes the
        secret screen here first, and a personal one needs its person. Its answer comes
        once its row and index entries are written: a vector search finds it at once."""
        for item in items:
            require_person_for_personal(item.personal, self.actor.person_id)
        if not screened:
            items = await self.screened(items)
        writable = self.actor.writable_trust
        # The model runs while the database is asked what it knows, so that those lookups
        # cost nothing past the model's time. One memory's embedding starts beside its
        # exact-duplicate lookup: a store mostly brings new content (known content, then
        # reinforced, wastes that model call). A batch's lookup comes first, one statement,
        # so that observing known memories again costs no model call; its first chunk's
        # embedding then runs beside the provenance read and the connection given back.
        first = self.embedding([items[0].embedding_text()]) if len(items) == 1 else None
        try:
            with self._telemetry.phase("known"):
                reinforced = await self._repo.reinforce_embedded(items, writable)
            fresh = [i for i, memory in enumerate(reinforced) if memory is None]
            if first is not None and not fresh:
                first.cancel()
            elif first is None and fresh:
                first = self.embedding([items[i].embedding_text() for i in fresh[:EMBED_CHUNK]])
            with self._telemetry.phase("provenance"):
                holds = await self._holds([items[i] for i in fresh])
            if fresh:
                # The model's work should hold no pool slot: under load it queues, and held
                # slots would starve searches. Possible while nothing is written yet.
                await self._uow.release_if_unwritten()
            upserted = await self._embed_and_upsert(
                [(items[i], hold) for i, hold in zip(fresh, holds, strict=True)], writable, first
            )
        except BaseException:
            if first is not None:
                first.cancel()  # a no-op once it is done
            raise
        outcomes = [StoreOutcome("reinforced", m) if m else None for m in reinforced]
        for i, result in zip(fresh, upserted, strict=True):
            if result is None:
                # The answer must not carry the quarantined row's (possibly altered) text.
                raise ConflictError(
                    "a quarantined memory holds this content: an admin must review it"
                    " (GET /memories?include_quarantined=true) before it can be stored again",
                    field="content" if len(items) == 1 else f"memories.{i}.content",
                )
            status: Literal["stored", "reinforced"] = "stored" if result.inserted else "reinforced"
            outcomes[i] = StoreOutcome(status, result.memory, result.merged, result.may_supersede)
        done = [outcome for outcome in outcomes if outcome is not None]
        for outcome in done:
            self._telemetry.stored(outcome)
            self._log(outcome)
        return done

    async def _holds(self, news: Sequence[NewMemory]) -> list[Hold | None]:
        """What each new memory carries of where it came from, and whether it waits for a
        person (app/domain/provenance.py): its text, and an open session of its repository
        (or, for a global one, any) that read untrusted input."""
        sessions = SessionRepository(self._uow)
        exposures: dict[str | None, Exposure | None] = {}
        dangers = await self.dangerous([new.content for new in news])
        policy = self.limits.untrusted_memories
        holds = []
        for new, danger in zip(news, dangers, strict=True):
            if new.source_repo not in exposures:
                exposures[new.source_repo] = await sessions.exposure(new.source_repo)
            holds.append(hold_for(danger, new.trust_level, exposures[new.source_repo], policy))
        return holds

    @staticmethod
    async def dangerous(texts: Sequence[str]) -> list[str | None]:
        """What each text tells an agent to do that holds it whatever its provenance
        (app/domain/provenance.py), read in a worker thread past RULE_INLINE_CHARS."""

        def read_all() -> list[str | None]:
            return [dangerous_instruction(text) for text in texts]

        if sum(len(text) for text in texts) > RULE_INLINE_CHARS:
            return await asyncio.to_thread(read_all)
        return read_all()

    async def _embed_and_upsert(
        self,
        news: Sequence[tuple[NewMemory, Hold | None]],
        writable: Sequence[str],
        first: Embedding | None,
    ) -> list[UpsertResult | None]:
        """`first`: the first chunk's embedding, under way."""

        async def chunks() -> AsyncIterator[Sequence[tuple[NewMemory, Hold | None]]]:
            for i in range(0, len(news), EMBED_CHUNK):
                yield news[i : i + EMBED_CHUNK]

        results: list[UpsertResult | None] = []
        embedded = self.embedded_ahead(chunks(), lambda item: item[0].embedding_text(), first)
        async with aclosing(embedded):
            async for chunk, vectors in embedded:
                with self._telemetry.phase("reconnect"):  # none to take when it is held
                    await self._repo.writing()
                results += await self._merge_or_upsert(
                    list(zip(chunk, vectors, strict=True)), writable
                )
        return results

    async def _merge_or_upsert(
        self,
        pairs: Sequence[tuple[tuple[NewMemory, Hold | None], list[float] | None]],
        writable: Sequence[str],
    ) -> list[UpsertResult | None]:
        """Each new memory against its nearest live ones (app/domain/duplicates.py): a
        near-duplicate reinforces the memory it repeats, a likely contradiction is stored and
        names the memory it may supersede, anything else is stored (or, the same text,
        reinforced). The stored ones are read for the whole chunk in one statement; each
        memory is also compared with those the chunk wrote before it."""
        compared = [(new, vector) for (new, _), vector in pairs if vector is not None]
        with self._telemetry.phase("near_duplicates"):
            found = iter(await self._repo.nearest_each(compared))
        written: list[Written] = []
        results: list[UpsertResult | None] = []
        for (new, hold), vector in pairs:
            verdict = Verdict()
            # None: no vector, or not comparable with the stored ones (another model's).
            stored = next(found) if vector is not None else None
            direction = unit(vector) if vector is not None and stored is not None else None
            if stored is not None and direction is not None:
                with self._telemetry.phase("near_duplicates"):
                    nearest = nearest_with(stored, direction, new.source_repo, written)
                    verdict = judge(new.content, new.memory_type, nearest)
            if verdict.merge_into is not None:
                with self._telemetry.phase("write"):
                    merged = await self._repo.reinforce_near(verdict.merge_into, new, writable)
                if merged is not None:
                    results.append(UpsertResult(merged, inserted=False, merged=True))
                    continue
            with self._telemetry.phase("write"):
                (result,) = await self._repo.upsert_many([(new, vector, hold)], writable)
            if result is not None and result.inserted:
                if direction is not None:
                    memory = result.memory
                    written.append(
                        Written(memory.id, memory.content, memory.memory_type,
                                memory.source_repo, direction)
                    )  # fmt: skip
                if verdict.may_supersede is not None:
                    result = dataclasses.replace(result, may_supersede=verdict.may_supersede)
            results.append(result)
        return results

    @staticmethod
    def _log(outcome: StoreOutcome) -> None:
        memory = outcome.memory
        logger.info(
            "store",
            extra={
                "status": outcome.status,
                "memory_id": str(memory.id),
                "memory_type": memory.memory_type,
                "source_repo": memory.source_repo,
            },
        )

    async def get(self, memory_id: UUID, include_quarantined: bool = False) -> Memory:
        """A quarantined or altered memory is served only to an admin who asks for it."""
        self.actor.require("admin" if include_quarantined else "read")
        memory = await self._repo.get(memory_id)
        if memory is None:
            raise NotFoundError(f"memory {memory_id} not found")
        if not memory.servable and not include_quarantined:
            raise NotFoundError(
                f"memory {memory_id} is quarantined (imported as such, or its content changed"
                " outside the API); an admin can read it with include_quarantined=true"
            )
        return memory

    async def by_prefix(self, text: str, include_quarantined: bool = False) -> Memory:
        """The one memory whose id starts with `text`; refused, with the ids it could be,
        when it is more than one."""
        prefix = id_prefix(text)
        found = await self._repo.starting_with(prefix, most=AMBIGUOUS_SHOWN + 1)
        if len(found) > 1:
            ids = ", ".join(str(m.id) for m in found[:AMBIGUOUS_SHOWN])
            more = " and more" if len(found) > AMBIGUOUS_SHOWN else ""
            raise ConflictError(
                f"{len(found) if not more else 'several'} memories start with {prefix.text!r}:"
                f" {ids}{more}; give more of the id"
            )
        if not found:
            raise NotFoundError(f"no memory's id starts with {prefix.text!r}")
        return await self.get(found[0].id, include_quarantined)

    async def get_many(self, memory_ids: Sequence[UUID]) -> list[Memory]:
        """In the order asked for; unknown and quarantined ones left out."""
        self.actor.require("read")
        return [m for m in await self._repo.get_many(memory_ids) if m.servable]

    async def lineage(self, memory_id: UUID) -> tuple[list[Memory], list[Memory]]:
        """(older, newer): what this memory replaced, and what replaced it (quarantined
        ones left out)."""
        self.actor.require("read")
        older, newer = await self._repo.lineage(memory_id, MAX_LINEAGE)
        return [m for m in older if m.servable], [m for m in newer if m.servable]

    async def delete(self, memory_id: UUID) -> None:
        self.actor.require("admin")
        before = await self._repo.get(memory_id)
        if before is None or not await self._repo.delete(memory_id):
            raise NotFoundError(f"memory {memory_id} not found")
        detail = {"content_hash": before.content_hash, "memory_type": before.memory_type}
        await AuditTrail(self._uow, self.actor).record("delete", [before], (), detail)

    async def require_known_types(self, memory_filter: MemoryFilter) -> None:
        await require_known_types(self._uow, memory_filter)

    async def list_page(self, request: ListRequest) -> MemoryPage:
        """Newest first; `next_cursor` continues after the last one (None: no more)."""
        query = list_query(request, self.limits)
        self.actor.require("admin" if query.filter.include_quarantined else "read")
        await self.require_known_types(query.filter)
        memories = await self._repo.list(query.filter, query.limit + 1, query.after)
        page, more = memories[: query.limit], len(memories) > query.limit
        next_cursor = encode_cursor(page[-1].created_at, page[-1].id) if more else None
        return MemoryPage(page, next_cursor)


@dataclass(frozen=True, slots=True)
class MemoryPage:
    memories: list[Memory]
    next_cursor: str | None
