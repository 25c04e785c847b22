"""Store, read, list and delete memories."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from pgvector import Vector

from app.db.unit_of_work import UnitOfWork
from app.domain.duplicates import NEAREST, Neighbour
from app.domain.filters import MemoryFilter
from app.domain.id_prefix import IdPrefix
from app.domain.memory import Memory, NewMemory
from app.domain.provenance import Hold
from app.repository.filters import served_sql
from app.repository.memory_writes import (
    REINFORCE,
    REINFORCE_ID,
    STORED_EMBEDDED,
    UPSERT,
)
from app.repository.nearest import near_duplicates
from app.repository.rows import (
    MEMORY_COLUMNS,
    client_values,
    returning_memories,
    to_memory,
)
from app.repository.sql import named

# The near-duplicate statement's plan does not depend on its values: which scope it reads
# is decided inside memory_nearest(), whose static statements for a repository (migration
# 0053) keep a plan per connection by this setting too. Left to the planner, it was
# planned again on every call, where one generic plan per connection answers faster with
# the same rows (docs/benchmarks.md, issue 69). Set for the transaction a store writes in,
# as the search sets it for its own; not on Citus, whose coordinator plans a routed
# statement its own way.
_WRITE_SETTINGS = {"plan_cache_mode": "force_generic_plan"}


# Both directions of the supersede chain in one round trip. Backwards uses the partial
# index on (tenant_id, superseded_by).
_LINEAGE = f"""
WITH RECURSIVE newer AS (
    SELECT m.superseded_by AS id, 1 AS depth
    FROM memories m
    WHERE m.tenant_id = :tenant_id AND m.id = :memory_id AND m.superseded_by IS NOT NULL
  UNION ALL
    SELECT m.superseded_by, n.depth + 1
    FROM newer n JOIN memories m ON m.tenant_id = :tenant_id AND m.id = n.id
    WHERE m.superseded_by IS NOT NULL AND n.depth < :max_depth
),
older AS (
    SELECT m.id, 1 AS depth
    FROM memories m
    WHERE m.tenant_id = :tenant_id AND m.superseded_by = :memory_id
  UNION ALL
    SELECT m.id, o.depth + 1
    FROM older o JOIN memories m ON m.tenant_id = :tenant_id AND m.superseded_by = o.id
    WHERE o.depth < :max_depth
),
chain AS (
    SELECT id, depth, 'newer' AS side FROM newer
    UNION ALL
    SELECT id, depth, 'older' FROM older
)
SELECT {MEMORY_COLUMNS}, c.side
FROM chain c JOIN memories m ON m.tenant_id = :tenant_id AND m.id = c.id
ORDER BY c.side, c.depth
"""


# A memory that this one superseded is current again once it is gone: its link is cleared
# in the same statement (the foreign key is NO ACTION, checked when the statement ends).
_DELETE = """
WITH unlinked AS (
    UPDATE memories m SET superseded_by = NULL, version = m.version + 1, updated_at = now()
    WHERE m.tenant_id = :tenant_id AND m.superseded_by = :memory_id
    RETURNING m.id
)
DELETE FROM memories m WHERE m.tenant_id = :tenant_id AND m.id = :memory_id RETURNING true
"""


@dataclass(frozen=True, slots=True)
class UpsertResult:
    memory: Memory
    inserted: bool
    merged: bool = False  # a near-duplicate's reinforcement of `memory`
    may_supersede: UUID | None = None


class MemoryRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    @property
    def tenant_id(self) -> str:
        return self._uow.tenant_id

    async def writing(self) -> Any:
        """The transaction a store's statements run in (begun, or taken again after the
        model ran), with the settings they are planned with."""
        return await self._uow.connection({} if self._uow.distributed else _WRITE_SETTINGS)

    def _upsert_values(
        self,
        new: NewMemory,
        embedding: Sequence[float] | None,
        writable: Sequence[str],
        hold: Hold | None,
    ) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            **client_values(new),
            "embedding": embedding,
            "created_by_key": self._uow.key_id,
            "person_id": self._uow.person_id,
            "embedding_model": self._uow.embedding_model,
            "writable": list(writable),
            # A new row only: known content keeps its own (a hold is released by a person).
            "held_at": datetime.now(UTC) if hold is not None and hold.held else None,
            "provenance": hold.provenance if hold is not None else None,
        }

    def _reinforce_values(
        self, new: NewMemory, writable: Sequence[str], now: datetime
    ) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "source_repo": new.source_repo,
            "content": new.content,
            "personal": new.personal,
            "tags": list(new.tags),
            "git_branch": new.git_branch,
            "git_commit": new.git_commit,
            "files": list(new.files),
            "writable": list(writable),
            "now": now,
        }

    async def nearest_each(
        self, news: Sequence[tuple[NewMemory, Sequence[float]]]
    ) -> list[list[Neighbour] | None]:
        """For each new memory, the live memories of its repository (and its reader: the
        team's, or its person's alone) nearest it, best first;
        None where its vector cannot be compared with the stored ones (another model's).
        One statement for each repository the memories name (a batch's are mostly one)."""
        conn = await self.writing()
        distributed = self._uow.distributed
        found: list[list[Neighbour] | None] = [None] * len(news)
        by_repo: dict[str | None, list[int]] = {}
        for i, (new, _) in enumerate(news):
            by_repo.setdefault(new.source_repo, []).append(i)
        for repo, where in by_repo.items():
            one = len(where) == 1
            values: dict[str, Any] = {"tenant_id": self.tenant_id, "nearest": NEAREST}
            if one:
                values["embedding"] = news[where[0]][1]
            else:
                # Vector objects: a list of lists would be read as a 2-dimensional array.
                values["embeddings"] = [Vector(list(news[i][1])) for i in where]
            if not distributed:
                values["embedding_model"] = self._uow.embedding_model
            statement, scope = near_duplicates(repo, distributed, one)
            rows = await conn.fetch(*named(statement, {**values, **scope}))
            # No row at all: every neighbour failed its integrity check (quarantined).
            if rows and not rows[0]["fits"]:
                continue  # another model's vectors: None for each
            each: list[list[Neighbour]] = [[] for _ in where]
            for r in rows:
                # A team memory never repeats a personal one, nor the other way round:
                # each stays where its writer filed it.
                at = r["ord"] - 1 if r["id"] is not None else None
                if at is not None and r["personal"] == news[where[at]][0].personal:
                    each[at].append(
                        Neighbour(r["id"], r["content"], r["memory_type"], float(r["similarity"]))
                    )
            for i, neighbours in zip(where, each, strict=True):
                found[i] = neighbours
        return found

    async def reinforce_near(
        self, memory_id: UUID, new: NewMemory, writable: Sequence[str]
    ) -> Memory | None:
        """Reinforce the memory a near-duplicate repeats (None: it changed meanwhile)."""
        conn = await self._uow.connection()
        values = self._reinforce_values(new, writable, datetime.now(UTC))
        del values["content"], values["source_repo"], values["personal"]
        row = await conn.fetchrow(*named(REINFORCE_ID, {**values, "memory_id": memory_id}))
        return to_memory(row) if row else None

    async def reinforce_embedded(
        self, items: Sequence[NewMemory], writable: Sequence[str]
    ) -> list[Memory | None]:
        """Reinforce each item that is already stored with an embedding; None for the rest,
        in input order. A duplicate inside `items` is reinforced once per occurrence.
        `writable`: the trust levels the caller may change beyond counting the observation.
        (asyncpg keeps each statement prepared per connection, across requests.)"""
        conn = await self._uow.connection()
        reinforced: list[Memory | None] = [None] * len(items)
        if len(items) > 1:
            values = {
                "tenant_id": self.tenant_id,
                "contents": [new.content for new in items],
                "source_repos": [new.source_repo for new in items],
                "personals": [new.personal for new in items],
            }
            known = [r["ord"] - 1 for r in await conn.fetch(*named(STORED_EMBEDDED, values))]
        else:
            known = list(range(len(items)))  # one memory: the UPDATE is the lookup
        now = datetime.now(UTC)  # Citus takes no now() inside a CASE of an UPDATE
        for i in known:
            row = await conn.fetchrow(
                *named(REINFORCE, self._reinforce_values(items[i], writable, now))
            )
            reinforced[i] = to_memory(row) if row else None
        return reinforced

    async def upsert_many(
        self,
        items: Sequence[tuple[NewMemory, Sequence[float] | None, Hold | None]],
        writable: Sequence[str],
    ) -> list[UpsertResult | None]:
        """In input order, in the caller's transaction; None where the content is that of a
        quarantined or altered memory, which is never reinforced. One statement per memory:
        a duplicate inside the batch must see the row its twin just wrote, which a single
        multi-row INSERT ... ON CONFLICT cannot do."""
        if not items:
            return []  # everything was reinforced
        conn = await self._uow.connection()
        results = []
        for new, embedding, hold in items:
            row = await conn.fetchrow(
                *named(UPSERT, self._upsert_values(new, embedding, writable, hold))
            )
            results.append(UpsertResult(to_memory(row), row["inserted"]) if row else None)
        return results

    async def set_embedding(
        self, memory_id: UUID, embedding: Sequence[float] | None
    ) -> Memory | None:
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            *named(
                returning_memories(
                    "UPDATE memories AS m SET embedding = memory_vector_if_fits(:embedding, :model)"
                    " WHERE m.tenant_id = :tenant_id AND m.id = :memory_id"
                ),
                {
                    "tenant_id": self.tenant_id,
                    "memory_id": memory_id,
                    "embedding": embedding,
                    "model": self._uow.embedding_model,
                },
            )
        )
        return to_memory(row) if row else None

    async def get(self, memory_id: UUID) -> Memory | None:
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            *named(
                f"SELECT {MEMORY_COLUMNS} FROM memories m"
                " WHERE m.tenant_id = :tenant_id AND m.id = :memory_id",
                {"tenant_id": self.tenant_id, "memory_id": memory_id},
            )
        )
        return to_memory(row) if row else None

    async def starting_with(self, prefix: IdPrefix, most: int) -> list[Memory]:
        """The memories whose ids fall in the prefix's range (a primary-key range read), at
        most `most`, in id order."""
        conn = await self._uow.connection()
        rows = await conn.fetch(
            *named(
                f"SELECT {MEMORY_COLUMNS} FROM memories m"
                " WHERE m.tenant_id = :tenant_id AND m.id BETWEEN :low AND :high"
                " ORDER BY m.id LIMIT :most",
                {"tenant_id": self.tenant_id, "most": most, "low": prefix.low, "high": prefix.high},
            )
        )
        return [to_memory(row) for row in rows]

    async def get_many(self, memory_ids: Sequence[UUID]) -> list[Memory]:
        """In the order asked for; unknown ids left out."""
        conn = await self._uow.connection()
        rows = await conn.fetch(
            *named(
                f"SELECT {MEMORY_COLUMNS} FROM unnest(:ids::uuid[]) WITH ORDINALITY AS w(id, n)"
                " JOIN memories m ON m.tenant_id = :tenant_id AND m.id = w.id ORDER BY w.n",
                {"tenant_id": self.tenant_id, "ids": list(memory_ids)},
            )
        )
        return [to_memory(row) for row in rows]

    async def lineage(self, memory_id: UUID, max_depth: int) -> tuple[list[Memory], list[Memory]]:
        """The memories this one replaced (older, nearest first) and those that replaced it
        (newer, nearest first), at most `max_depth` links each way."""
        conn = await self._uow.connection()
        values = {"tenant_id": self.tenant_id, "memory_id": memory_id, "max_depth": max_depth}
        rows = await conn.fetch(*named(_LINEAGE, values))
        older = [to_memory(r) for r in rows if r["side"] == "older"]
        newer = [to_memory(r) for r in rows if r["side"] == "newer"]
        return older, newer

    async def delete(self, memory_id: UUID) -> bool:
        conn = await self._uow.connection()
        deleted = await conn.fetchval(
            *named(_DELETE, {"tenant_id": self.tenant_id, "memory_id": memory_id})
        )
        return bool(deleted)

    async def stored_types(self, most: int) -> list[str]:
        """The memory types the tenant's rows carry (any state), at most `most`, in order."""
        conn = await self._uow.connection()
        rows = await conn.fetch(*named(_STORED_TYPES, {"tenant_id": self.tenant_id, "most": most}))
        return [row["memory_type"] for row in rows]

    async def list(
        self, filters: MemoryFilter, limit: int, after: tuple[datetime, UUID] | None
    ) -> list[Memory]:
        """Newest first, keyset-paginated on (created_at, id)."""
        conn = await self._uow.connection()
        values: dict[str, Any] = {"tenant_id": self.tenant_id}

        def bind(value: Any, name: str) -> str:
            values[name] = value
            return f":{name}"

        clauses = [served_sql(filters, bind, tenant=":tenant_id")]
        if after is not None:
            created_at, last_id = after
            clauses.append(
                f"(m.created_at, m.id) < ({bind(created_at, 'after_created_at')},"
                f" {bind(last_id, 'after_id')})"
            )
        sql = (
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {' AND '.join(clauses)}"
            f" ORDER BY m.created_at DESC, m.id DESC LIMIT {bind(limit, 'row_limit')}"
        )
        return [to_memory(row) for row in await conn.fetch(*named(sql, values))]


# The types the tenant has stored, in order: a skip along memories_type_key, one index
# probe per type, never a read of every row. At most :most of them.
_STORED_TYPES = """
WITH RECURSIVE stored(memory_type) AS (
    (SELECT m.memory_type FROM memories m WHERE m.tenant_id = :tenant_id
     ORDER BY m.memory_type LIMIT 1)
    UNION ALL
    SELECT (SELECT m.memory_type FROM memories m
            WHERE m.tenant_id = :tenant_id AND m.memory_type > s.memory_type
            ORDER BY m.memory_type LIMIT 1)
    FROM stored s
    WHERE s.memory_type IS NOT NULL
)
SELECT memory_type FROM stored WHERE memory_type IS NOT NULL LIMIT :most"""
