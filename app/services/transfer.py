"""Export and import of a tenant's memories (a backup, or a move to another server)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol
from uuid import UUID

from app.domain.errors import InvalidInputError
from app.domain.memory import Memory
from app.domain.people import require_person_for_personal
from app.domain.secrets.screen import screen_fields
from app.domain.sessions import Session
from app.domain.transfer import (
    ExportHeader,
    ExportRequest,
    ImportedMemory,
    ImportRequest,
    SessionLine,
    at_line,
    export_query,
    held_if_dangerous,
    import_header,
    imported_memory,
    imported_session,
    usable_vectors,
)
from app.repository.transfer import SessionTransferRepository, TransferRepository
from app.services.audit import AuditTrail
from app.services.memories import MemoryService

# Lines embedded (when needed) and written together; the next chunk is embedded while one
# is written.
IMPORT_CHUNK = 64


class ImportSource(Protocol):
    """An import file as a door reads it: its header, then its numbered lines: memories,
    then sessions."""

    async def header(self) -> ExportHeader: ...

    def memories(self) -> AsyncIterator[tuple[int, ImportRequest | SessionLine]]: ...


@dataclass(frozen=True, slots=True)
class Export:
    header: ExportHeader
    memories: AsyncIterator[tuple[Memory, list[float] | None]]
    sessions: AsyncIterator[Session]


@dataclass(slots=True)
class ImportReport:
    memories: int = 0
    stored: int = 0
    reinforced: int = 0
    already_here: int = 0  # the same memory (its id and content): changed nothing
    reembedded: int = 0
    linked: int = 0
    unresolved_links: int = 0
    quarantined: int = 0
    sessions: int = 0  # sessions new here (one imported before is left as it is)


async def _marked(
    rows: AsyncIterator[tuple[Memory, list[float] | None]],
) -> AsyncIterator[tuple[Memory, list[float] | None]]:
    """A row altered behind the API's back leaves quarantined, whether or not a search has
    marked it yet; its stored hash goes with it, so an import elsewhere can tell."""
    async for memory, vector in rows:
        yield memory.marked_if_altered(datetime.now(UTC)), vector


class TransferService:
    def __init__(
        self,
        memories: MemoryService,
        repo: TransferRepository,
        sessions: SessionTransferRepository,
        audit: AuditTrail,
    ) -> None:
        self._memories = memories
        self._repo = repo
        self._sessions = sessions
        self._audit = audit

    async def export(self, request: ExportRequest) -> Export:
        """Every memory of the caller's tenant (optionally one repository, or a window of
        time), archived and superseded ones included, oldest first; with the vectors when
        asked for. Quarantined and altered memories go only into an admin's export, marked
        quarantined. Sessions go by repository alone."""
        self._memories.actor.require("read")
        with_quarantined = self._memories.actor.can("admin")
        query = export_query(request, self._memories.limits, with_quarantined)
        await self._memories.require_known_types(query.filter)
        embedder = self._memories.embedder
        header = ExportHeader(
            tenant_id=self._repo.tenant_id,
            source_repo=query.source_repo,
            count=await self._repo.count(query.filter),
            embedding_model=embedder.name if query.embeddings else None,
            dimensions=embedder.dim if query.embeddings else None,
            exported_at=datetime.now(UTC),
            sessions=await self._sessions.count(query.source_repo),
        )
        return Export(
            header,
            _marked(self._repo.stream(query.filter, query.embeddings)),
            self._sessions.stream(query.source_repo),
        )

    async def import_memories(self, source: ImportSource) -> ImportReport:
        """All or nothing, in the caller's transaction: a bad line (named by its number)
        and nothing is written. Known content is reinforced, not duplicated, so importing
        a file twice changes counts, not rows. Vectors from another model (or none) are
        made again by this server's; supersede links are restored once every line is in."""
        self._memories.actor.require("admin")
        header = import_header(await source.header())
        embedder = self._memories.embedder
        kept = header.dimensions if usable_vectors(header, embedder.name, embedder.dim) else None
        report = ImportReport()
        here: dict[UUID, UUID] = {}  # the file's id -> the id in this tenant
        links: list[tuple[UUID, UUID]] = []  # (id here, the file's id of its successor)
        sessions: list[Session] = []
        embedded = self._memories.embedded_ahead(
            self._chunks(source, kept, sessions),
            lambda item: item.new.embedding_text() if item.embedding is None else None,
        )
        async with aclosing(embedded):
            async for chunk, vectors in embedded:
                await self._write(chunk, vectors, report, here, links)
        resolved = [(memory, here.get(successor, successor)) for memory, successor in links]
        report.linked = await self._repo.link(resolved)
        report.unresolved_links = len(links) - report.linked
        for session in sessions:
            report.sessions += await self._sessions.insert(session)
        await self._audit.record("import", detail=dataclasses.asdict(report), memory_ids=[])
        return report

    async def _chunks(
        self, source: ImportSource, kept: int | None, sessions: list[Session]
    ) -> AsyncIterator[list[ImportedMemory]]:
        """The file's memories, screened, IMPORT_CHUNK at a time; its sessions, screened,
        into `sessions`. A bad line raises, named by its number."""
        policy = self._memories.limits.secrets_policy
        chunk: list[ImportedMemory] = []
        async for number, draft in source.memories():
            try:
                if isinstance(draft, SessionLine):
                    sessions.append(screen_fields(imported_session(draft), policy))
                    continue
                item = imported_memory(draft, self._memories.limits, kept)
                # A personal line becomes the importer's own: it needs their person.
                require_person_for_personal(item.new.personal, self._memories.actor.person_id)
                (screened,) = await self._memories.screened([item.new])
                (danger,) = await self._memories.dangerous([screened.content])
            except InvalidInputError as exc:
                raise at_line(number, exc) from exc
            state = held_if_dangerous(item.state, danger)
            chunk.append(dataclasses.replace(item, new=screened, state=state))
            if len(chunk) == IMPORT_CHUNK:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    async def _write(
        self,
        chunk: Sequence[ImportedMemory],
        vectors: Sequence[list[float] | None],
        report: ImportReport,
        here: dict[UUID, UUID],
        links: list[tuple[UUID, UUID]],
    ) -> None:
        report.reembedded += sum(item.embedding is None for item in chunk)
        # The file's ids are kept where this tenant has no memory with them yet.
        taken = await self._repo.taken([i.source_id for i in chunk if i.source_id])
        for item, made in zip(chunk, vectors, strict=True):
            vector = item.embedding if item.embedding is not None else made
            wanted = item.source_id if item.source_id not in taken else None
            imported = await self._repo.insert(item, vector, wanted)
            memory_id = imported.id
            taken.add(memory_id)
            report.quarantined += imported.quarantined
            report.memories += 1
            if imported.outcome == "stored":
                report.stored += 1
            elif imported.outcome == "reinforced":
                report.reinforced += 1
            else:
                report.already_here += 1
            if item.source_id is not None:
                here[item.source_id] = memory_id
            if item.superseded_by is not None:
                links.append((memory_id, item.superseded_by))
