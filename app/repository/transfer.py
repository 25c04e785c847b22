"""Reading a tenant's memories out whole, and writing imported ones back with their history."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from typing import Any, Literal
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.fields import BY_NAME
from app.domain.filters import MemoryFilter
from app.domain.memory import Memory
from app.domain.sessions import Session
from app.domain.transfer import ImportedMemory, MemoryState
from app.repository.filters import only_repository_rows, served_sql
from app.repository.memory_writes import MERGED_TAGS, OBSERVED_AGAIN
from app.repository.rows import (
    CLIENT_COLUMNS,
    CLIENT_VALUES,
    DEDUP_KEY,
    MEMORY_COLUMNS,
    QUARANTINED,
    WRITER_COLUMNS,
    WRITER_VALUES,
    client_values,
    imported_values,
    to_memory,
)
from app.repository.sessions import SESSION_COLUMNS, session_of
from app.repository.sql import named


def _exported(f: MemoryFilter, values: dict[str, Any]) -> str:
    """What an export holds: the filter's rows (a quarantined or altered one only for an
    admin's, marked)."""

    def bind(value: Any, name: str) -> str:
        values[name] = value
        return f":{name}"

    return served_sql(f, bind, tenant=":tenant_id")


# What an import carries over of a memory's life (MemoryState) that memories stores.
_STATE_COLUMNS = tuple(f.name for f in fields(MemoryState) if BY_NAME[f.name].stored)

# The file's id where it is free here (see taken), a new one otherwise. Known content (the
# dedup key) is reinforced as a store would, but an import is no new observation of an
# archived memory: it stays archived. The same memory (known content under the line's own
# id: a backup restored where it came from, or a file imported twice) is already here and
# changes nothing: no row comes back. The vector is kept only by a server of the recorded
# model, as in a store (migration 0019). The state columns: imported_values().
_IMPORT = f"""
INSERT INTO memories AS m (
    tenant_id, id, {CLIENT_COLUMNS}, content_hash, embedding, {WRITER_COLUMNS}, context_hash,
    {", ".join(_STATE_COLUMNS)}
)
VALUES (
    :tenant_id, coalesce(:id::uuid, uuidv7()), {CLIENT_VALUES}, memory_content_hash(:content),
    memory_vector_if_fits(:embedding, :embedding_model), {WRITER_VALUES},
    memory_content_hash(:context), {imported_values(_STATE_COLUMNS)}
)
ON CONFLICT {DEDUP_KEY} DO UPDATE SET
    {OBSERVED_AGAIN},
    tags = {MERGED_TAGS.format(incoming="EXCLUDED.tags")},
    embedding = coalesce(m.embedding, EXCLUDED.embedding),
    version = m.version + 1,
    updated_at = EXCLUDED.updated_at
WHERE m.id IS DISTINCT FROM :file_id::uuid
RETURNING m.id, (xmax = 0) AS inserted, {QUARANTINED} AS quarantined
"""

# A new memory keeps the reads it had, beside it as a search counts them (migration 0030).
_IMPORT_READS = """
INSERT INTO memory_access (tenant_id, memory_id, access_count, last_accessed_at)
VALUES (:tenant_id, :memory_id, :access_count, :last_accessed_at)
"""

# Links whose target is in this tenant; a link already in place is left as it is.
_LINK = """
WITH links AS (
    SELECT l.id, l.superseded_by FROM unnest(:ids::uuid[], :targets::uuid[]) AS l(id, superseded_by)
),
resolved AS (
    SELECT l.id, l.superseded_by FROM links l
    WHERE EXISTS (
        SELECT 1 FROM memories t WHERE t.tenant_id = :tenant_id AND t.id = l.superseded_by
    )
),
changed AS (
    UPDATE memories m SET superseded_by = r.superseded_by, version = m.version + 1,
                          updated_at = now()
    FROM resolved r
    WHERE m.tenant_id = :tenant_id AND m.id = r.id
      AND m.superseded_by IS DISTINCT FROM r.superseded_by
    RETURNING m.id
)
SELECT (SELECT count(*) FROM resolved) AS resolved, (SELECT count(*) FROM changed) AS changed
"""


ImportOutcome = Literal["stored", "reinforced", "already_here"]


@dataclass(frozen=True, slots=True)
class Imported:
    id: UUID
    outcome: ImportOutcome
    quarantined: bool


class TransferRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    @property
    def tenant_id(self) -> str:
        return self._uow.tenant_id

    async def count(self, exported: MemoryFilter) -> int:
        conn = await self._uow.connection()
        values: dict[str, Any] = {"tenant_id": self.tenant_id}
        where = _exported(exported, values)
        counted = await conn.fetchval(
            *named(f"SELECT count(*) FROM memories m WHERE {where}", values)
        )
        return int(counted)

    async def stream(
        self, exported: MemoryFilter, with_embeddings: bool
    ) -> AsyncIterator[tuple[Memory, list[float] | None]]:
        """The filter's memories, oldest first (a file reads like the memories' history),
        read through a cursor so that a large tenant is never held in memory whole."""
        conn = await self._uow.connection()
        values: dict[str, Any] = {"tenant_id": self.tenant_id, "with_embeddings": with_embeddings}
        where = _exported(exported, values)
        statement = named(
            f"""SELECT {MEMORY_COLUMNS}, CASE WHEN :with_embeddings THEN m.embedding END AS vector
FROM memories m
WHERE {where}
ORDER BY m.created_at, m.id""",
            values,
        )
        async for row in conn.cursor(*statement, prefetch=256):
            vector = row["vector"]
            yield to_memory(row), (None if vector is None else vector.to_list())

    async def taken(self, ids: Sequence[UUID]) -> set[UUID]:
        """Which of these ids this tenant's memories already have (one statement for a
        chunk of lines; a subquery inside the INSERT would be one per line, and Citus
        routes no INSERT with a subquery)."""
        if not ids:
            return set()
        conn = await self._uow.connection()
        rows = await conn.fetch(
            *named(
                "SELECT m.id FROM memories m"
                " WHERE m.tenant_id = :tenant_id AND m.id = ANY(:ids::uuid[])",
                {"tenant_id": self.tenant_id, "ids": list(ids)},
            )
        )
        return {r["id"] for r in rows}

    async def insert(
        self, item: ImportedMemory, embedding: Sequence[float] | None, memory_id: UUID | None
    ) -> Imported:
        """The memory's id here (`memory_id`, or a new one when None), what became of the
        line (new, known content reinforced, or the same memory already here), and whether
        it is quarantined."""
        conn = await self._uow.connection()
        new, state = item.new, item.state
        values = {
            "tenant_id": self.tenant_id,
            "id": memory_id,
            **client_values(new),
            "embedding": embedding,
            "embedding_model": self._uow.embedding_model,
            "created_by_key": self._uow.key_id,
            "person_id": self._uow.person_id,
            **{name: getattr(state, name) for name in _STATE_COLUMNS},
            "file_hash": item.content_hash,
            "file_id": item.source_id,
            "imported_at": datetime.now(UTC),
        }
        row = await conn.fetchrow(*named(_IMPORT, values))
        if row is None:  # the line's own memory, with its content: nothing to change
            assert item.source_id is not None
            return Imported(item.source_id, "already_here", quarantined=False)
        if row["inserted"] and (state.access_count or state.last_accessed_at):
            reads = {
                "tenant_id": self.tenant_id,
                "memory_id": row["id"],
                "access_count": state.access_count,
                "last_accessed_at": state.last_accessed_at,
            }
            await conn.execute(*named(_IMPORT_READS, reads))
        outcome: ImportOutcome = "stored" if row["inserted"] else "reinforced"
        return Imported(row["id"], outcome, row["quarantined"])

    async def link(self, links: Sequence[tuple[UUID, UUID]]) -> int:
        """Set each (memory, superseded_by) whose target exists; returns how many did."""
        if not links:
            return 0
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            *named(
                _LINK,
                {
                    "tenant_id": self.tenant_id,
                    "ids": [memory for memory, _ in links],
                    "targets": [target for _, target in links],
                },
            )
        )
        return int(row["resolved"])


# Sessions go with their memories: the repository's (or all), oldest first.
_EXPORT_SESSIONS = f"""
SELECT {SESSION_COLUMNS} FROM sessions
WHERE tenant_id = :tenant_id AND {only_repository_rows("source_repo")}
ORDER BY started_at, id
"""

_IMPORT_SESSION = """
INSERT INTO sessions (tenant_id, id, source_repo, agent, task, status, summary, key_changes,
                      started_at, ended_at, git_branch, git_commit)
VALUES (:tenant_id, :id, :source_repo, :agent, :task, :status, :summary, :key_changes,
        :started_at, :ended_at, :git_branch, :git_commit)
ON CONFLICT (tenant_id, id) DO NOTHING
RETURNING true
"""


class SessionTransferRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def count(self, source_repo: str | None) -> int:
        conn = await self._uow.connection()
        counted = await conn.fetchval(
            *named(
                "SELECT count(*) FROM sessions WHERE tenant_id = :tenant_id"
                f" AND {only_repository_rows('source_repo')}",
                {"tenant_id": self._uow.tenant_id, "source_repo": source_repo},
            )
        )
        return int(counted)

    async def stream(self, source_repo: str | None) -> AsyncIterator[Session]:
        conn = await self._uow.connection()
        text, *args = named(
            _EXPORT_SESSIONS, {"tenant_id": self._uow.tenant_id, "source_repo": source_repo}
        )
        async for row in conn.cursor(text, *args, prefetch=256):
            yield session_of(row)

    async def insert(self, session: Session) -> bool:
        """False: this tenant already has a session with that id (imported before)."""
        conn = await self._uow.connection()
        values = {"tenant_id": self._uow.tenant_id, **asdict(session)}
        return bool(await conn.fetchval(*named(_IMPORT_SESSION, values)))
