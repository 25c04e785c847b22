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
from app.repository.rows import (
    CLIENT_COLUMNS,
    CLIENT_VALUES,
    DEDUP_KEY,
    INTACT,
    MEMORY_COLUMNS,
    SERVABLE,
    WRITER_COLUMNS,
    WRITER_VALUES,
    client_values,
    returning_memories,
    to_memory,
)
from app.repository.sql import named

# One statement per memory: a new row, or (same tenant, repo and normalised content)
# the existing row reinforced. ON CONFLICT makes this atomic under concurrency. Its SET
# calls immutable functions only, as Citus requires there: the time is the proposed
# row's default, now().
# Reinforcing keeps the original confidence and trust and counts the observation. Only a
# caller who may write the stored row's trust level (:writable) also merges its tags (order
# kept, no duplicates), moves its version, and brings it back from the forgetting curve's
# archive, since it was just observed again: an agent re-storing a person's or the
# operator's memory changes nothing else (an admin's undo still finds the version it left),
# and no re-store undoes an admin's archive. A quarantined or altered row is never
# reinforced: the write finds no row, and the service refuses it.
# (A function, not a subquery: Citus routes no INSERT with a subquery.)
MERGED_TAGS = "memory_merged_tags(m.tags, {incoming})"
_MAY_CHANGE = "m.trust_level = ANY(:writable::text[])"
VECTOR_IF_FITS = "memory_vector_if_fits(:embedding, :embedding_model)"
_REVIVES = f"({_MAY_CHANGE} AND NOT m.archived_by_admin)"
# Observed again at a commit, by a writer who may change it: where it was seen last (what
# it names of its code only when it names anything), and no longer possibly stale.
_OBSERVED_AT = f"""git_branch = CASE WHEN {_MAY_CHANGE} THEN coalesce({{new}}, m.git_branch)
                      ELSE m.git_branch END,
    git_commit = CASE WHEN {_MAY_CHANGE} THEN coalesce({{commit}}, m.git_commit)
                      ELSE m.git_commit END,
    files = CASE WHEN {_MAY_CHANGE} AND cardinality({{files}}) > 0 THEN {{files}}
                 ELSE m.files END,
    stale_since = CASE WHEN {_MAY_CHANGE} THEN NULL ELSE m.stale_since END,
    stale_reason = CASE WHEN {_MAY_CHANGE} THEN NULL ELSE m.stale_reason END"""

# Known content stored again: one more observation (a store, a batch, an import).
OBSERVED_AGAIN = "observation_count = m.observation_count + 1"

_UPSERT = returning_memories(
    f"""
INSERT INTO memories AS m (
    tenant_id, {CLIENT_COLUMNS}, content_hash, embedding, {WRITER_COLUMNS}, context_hash,
    held_at, provenance
)
VALUES (
    :tenant_id, {CLIENT_VALUES}, memory_content_hash(:content),
    {VECTOR_IF_FITS}, {WRITER_VALUES},
    memory_content_hash(:context),
    :held_at, :provenance
)
ON CONFLICT {DEDUP_KEY} DO UPDATE SET
    {OBSERVED_AGAIN},
    tags = CASE WHEN {_MAY_CHANGE} THEN {MERGED_TAGS.format(incoming="EXCLUDED.tags")}
                ELSE m.tags END,
    embedding = coalesce(m.embedding, EXCLUDED.embedding),
    archived_at = CASE WHEN {_REVIVES} THEN NULL ELSE m.archived_at END,
    {
        _OBSERVED_AT.format(
            new="EXCLUDED.git_branch", commit="EXCLUDED.git_commit", files="EXCLUDED.files"
        )
    },
    version = CASE WHEN {_MAY_CHANGE} THEN m.version + 1 ELSE m.version END,
    updated_at = CASE WHEN {_MAY_CHANGE} THEN EXCLUDED.updated_at ELSE m.updated_at END
WHERE {SERVABLE}""",
    inserted="(m.xmax = 0)",
)


# The same reinforcement for a memory already stored with its embedding, so that observing
# it again needs no model call. A miss (new, or still pending an embedding) returns nothing
# and goes through _UPSERT. The dedup key leads with content_hash: an index search whether
# or not there is a repository (`IS NOT DISTINCT FROM` matches its NULLS NOT DISTINCT).
def _reinforce(which: str) -> str:
    """The reinforcement of the stored memory `which` selects (a WHERE on m)."""
    return returning_memories(
        f"""
UPDATE memories AS m SET
    {OBSERVED_AGAIN},
    tags = CASE WHEN {_MAY_CHANGE} THEN {MERGED_TAGS.format(incoming=":tags::text[]")}
                ELSE m.tags END,
    archived_at = CASE WHEN {_REVIVES} THEN NULL ELSE m.archived_at END,
    {
            _OBSERVED_AT.format(
                new=":git_branch::text", commit=":git_commit::text", files=":files::text[]"
            )
        },
    version = CASE WHEN {_MAY_CHANGE} THEN m.version + 1 ELSE m.version END,
    updated_at = CASE WHEN {_MAY_CHANGE} THEN :now ELSE m.updated_at END
WHERE m.tenant_id = :tenant_id AND {which} AND {SERVABLE}"""
    )


# The dedup key's row (DEDUP_KEY): of the reader the writer asks for, the team's or their
# own (row security shows no other person's).
_KNOWN = (
    "m.content_hash = memory_content_hash({content})"
    " AND m.source_repo IS NOT DISTINCT FROM {source_repo} AND m.personal = {personal}"
    " AND m.embedding IS NOT NULL"
)
_REINFORCE = _reinforce(
    _KNOWN.format(content=":content", source_repo=":source_repo", personal=":personal")
)
# Which of a batch's memories _REINFORCE would find, in one statement: most of a batch is
# new, and each of those would otherwise cost an UPDATE that finds nothing. Each through
# the dedup key, and only the row found is checked whole (LATERAL ... LIMIT 1): as a join,
# under row-level security, the plan hashed every row of the tenant for the integrity
# check first (324 ms for a batch of 100 in 11,000 rows; 6.5 ms this way).
_STORED_EMBEDDED = f"""
SELECT n.ord
FROM unnest(:contents::text[], :source_repos::text[], :personals::boolean[])
     WITH ORDINALITY AS n(content, source_repo, personal, ord)
CROSS JOIN LATERAL (
    SELECT m.* FROM memories m
    WHERE m.tenant_id = :tenant_id
      AND {_KNOWN.format(content="n.content", source_repo="n.source_repo", personal="n.personal")}
    LIMIT 1
) m
WHERE {SERVABLE}"""
# A near-duplicate (app/domain/duplicates.py) reinforces the memory it nearly repeats.
_REINFORCE_ID = _reinforce("m.id = :memory_id")


# The near-duplicate check asks the graph for NEAREST where a search asks for 200: with a
# repository's share of the rows it finds them in its first round, and so wins over an
# exact read at a smaller scope. At 100,000 memories, a 2,000-row repository: read exactly
# 8.5 ms, through the graph 5.3 (bench.nearest_cost); a 200-row one through the graph, 55.
# Its bound is the search's for a graph this many times smaller (sqrt(factor x rows / 20):
# 1,581 rows at 100,000 memories, where the search's is 7,071). Measured when the exact
# read took a page for each row; ranking the index alone (migration 0040) is cheaper, and
# would take a smaller divisor: not measured again.
NEAREST_GRAPH_DIVISOR = 20


# The live memories nearest each new one's vector, in its own repository (or, for a global
# one, among the global ones), for the memories of one repository in a chunk, in one
# statement. A scope small beside the graph is read whole by exact distance (ranked from
# memories_scope_vectors_key as the search ranks a repository, or from its rows where the
# index does not hold them all), a larger one through the HNSW graph: the search's rule and
# bound (memory_vector_exact_bound(), sized by
# a count of at most bound + 1 of the scope's rows through memories_scope_count_key). The
# planner alone walked the graph for a new repository's few rows at 100,000 memories, with
# the repository given as a value or not (55-60 ms a store, where reading them takes 2).
# Each vector as the store writes it: none when the stored vectors are another model's
# (`fits` false). On Citus the statement runs on the tenant's worker, where a function
# reading the model table cannot, and re-embedding is for one PostgreSQL (search_statement.py
# does the same). The few found are then checked whole (the integrity check hashes each
# row). A repository's rows by equality, the global ones by IS NULL: either an index
# condition, where IS NOT DISTINCT FROM is not. The memories of the chunk itself are not
# stored yet: the service compares them (app/domain/duplicates.py).
def _nearest_each(distributed: bool, global_: bool, one: bool) -> str:
    # OFFSET 0 keeps the subquery whole, so that each vector is made once, not once per
    # row the sort reads (as an expression, memory_vector_if_fits() cost 5 ms for 200).
    def vector(value: str) -> str:
        return value if distributed else f"memory_vector_if_fits({value}, :embedding_model)"

    # One memory (a single store) without unnest: with an array of unknown length the
    # planner never takes the generic plan, and planning each call cost 0.65 ms of 2.
    new = (
        f"SELECT 1::bigint AS ord, {vector(':embedding::vector')} AS vector"
        if one
        else f"""SELECT n.ord, {vector("n.embedding")} AS vector
    FROM unnest(:embeddings::vector[]) WITH ORDINALITY AS n(embedding, ord)"""
    )
    repo = "m.source_repo IS NULL" if global_ else "m.source_repo = :source_repo"
    scope = f"m.tenant_id = :tenant_id AND {repo}"
    # Whether the scope's entries in memories_scope_vectors_key hold all its rows
    # (memory_vector_indexable(), migration 0040).
    indexed = (
        f"coalesce(memory_vector_indexable(:tenant_id,"
        f" {'NULL' if global_ else ':source_repo'}, new.vector), false)"
    )

    def nearest(exact: bool) -> str:
        # "+ 0": the same order, in a form the HNSW index cannot serve. Exactly, from the
        # rows: only a scope the index does not hold.
        distance = f"(m.embedding <=> new.vector){' + 0' if exact else ''}"
        taken = (
            f"(SELECT exact FROM sized) AND NOT {indexed}"
            if exact
            else "NOT (SELECT exact FROM sized)"
        )
        return f"""(
            SELECT m.id, m.content, m.memory_type, m.content_hash, m.context, m.context_hash,
                   m.personal, 1 - (m.embedding <=> new.vector) AS similarity
            FROM memories m
            WHERE {taken}
              AND {scope} AND m.embedding IS NOT NULL AND memory_is_live(m)
            ORDER BY {distance}
            LIMIT :nearest
        )"""

    # The exact read as the search makes it: the scope's entries ranked from the index
    # alone, then the rows read in that order until :nearest are live.
    ranked = f"""(
            SELECT m.id, m.content, m.memory_type, m.content_hash, m.context, m.context_hash,
                   m.personal, 1 - ranked.distance AS similarity
            FROM (
                SELECT m.id, (m.embedding <=> new.vector) + 0 AS distance
                FROM memories m
                WHERE (SELECT exact FROM sized) AND {indexed}
                  AND {scope} AND m.superseded_by IS NULL AND m.archived_at IS NULL
                  AND memory_vector_indexable(m.tenant_id, m.source_repo, m.embedding)
                ORDER BY 2
            ) ranked
            CROSS JOIN LATERAL (
                SELECT m.* FROM memories m
                WHERE m.tenant_id = :tenant_id AND m.id = ranked.id AND memory_is_live(m)
            ) m
            ORDER BY ranked.distance
            LIMIT :nearest
        )"""

    return f"""
WITH bound AS MATERIALIZED (
    SELECT memory_vector_exact_bound(
               (memory_home_rows(memory_home(:tenant_id)) / {NEAREST_GRAPH_DIVISOR})::real) AS most
),
sized AS MATERIALIZED (
    SELECT count(*) <= (SELECT most FROM bound) AS exact
    FROM (
        SELECT FROM memories m
        WHERE {scope} AND m.superseded_by IS NULL AND m.archived_at IS NULL
        LIMIT (SELECT most FROM bound) + 1
    ) scope_rows
)
SELECT new.ord, new.vector IS NOT NULL AS fits, m.id, m.content, m.memory_type, m.personal,
       m.similarity
FROM (
    {new}
    OFFSET 0
) new
LEFT JOIN LATERAL (
    SELECT m.id, m.content, m.memory_type, m.personal, m.similarity FROM (
        {ranked}
        UNION ALL
        {nearest(exact=True)}
        UNION ALL
        {nearest(exact=False)}
    ) m
    WHERE {INTACT}
) m ON true
ORDER BY new.ord, m.similarity DESC
"""


# The near-duplicate statement's plan does not depend on its values: which scope it reads
# is decided inside it (the count, each branch gated by it). Left to the planner, it was
# planned again on every call (2-10 ms a single store at 100,000 memories on a loaded
# machine), where one generic plan per connection answers in 0.3-1.2 ms with the same rows
# (docs/benchmarks.md, issue 69). Set for the transaction a store writes in, as the search
# sets it for its own; not on Citus, whose coordinator plans a routed statement its own way.
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
            if repo is not None:
                values["source_repo"] = repo
            if not distributed:
                values["embedding_model"] = self._uow.embedding_model
            statement = _nearest_each(distributed, repo is None, one)
            for r in await conn.fetch(*named(statement, values)):
                at = where[r["ord"] - 1]
                neighbours = found[at]
                if neighbours is None and r["fits"]:
                    neighbours = found[at] = []
                # A team memory never repeats a personal one, nor the other way round:
                # each stays where its writer filed it.
                same_reader = r["personal"] == news[at][0].personal
                if neighbours is not None and r["similarity"] is not None and same_reader:
                    neighbours.append(
                        Neighbour(r["id"], r["content"], r["memory_type"], float(r["similarity"]))
                    )
        return found

    async def reinforce_near(
        self, memory_id: UUID, new: NewMemory, writable: Sequence[str]
    ) -> Memory | None:
        """Reinforce the memory a near-duplicate repeats (None: it changed meanwhile)."""
        conn = await self._uow.connection()
        values = self._reinforce_values(new, writable, datetime.now(UTC))
        del values["content"], values["source_repo"], values["personal"]
        row = await conn.fetchrow(*named(_REINFORCE_ID, {**values, "memory_id": memory_id}))
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
            known = [r["ord"] - 1 for r in await conn.fetch(*named(_STORED_EMBEDDED, values))]
        else:
            known = list(range(len(items)))  # one memory: the UPDATE is the lookup
        now = datetime.now(UTC)  # Citus takes no now() inside a CASE of an UPDATE
        for i in known:
            row = await conn.fetchrow(
                *named(_REINFORCE, self._reinforce_values(items[i], writable, now))
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
                *named(_UPSERT, self._upsert_values(new, embedding, writable, hold))
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


# Two assignments by who gives the feedback: one who may write the memory's trust counts a
# reuse and moves its version; anyone else moves only its relevance, never below the
# trusted floor. (Every CASE over columns, parameters and immutable functions only, as
# Citus requires: jsonb_set or now() may not sit in one.)
_FEEDBACK = returning_memories(f"""
UPDATE memories AS m SET
    relevance_score = least(greatest(
        m.relevance_score + :delta,
        CASE WHEN {_MAY_CHANGE} THEN :floor
             ELSE least(:trusted_floor, m.relevance_score) END), :ceiling),
    metadata = m.metadata || jsonb_strip_nulls(jsonb_build_object('reuse_count',
        CASE WHEN {_MAY_CHANGE}
             THEN coalesce((m.metadata->>'reuse_count')::int, 0) + 1 END)),
    version = m.version + CASE WHEN {_MAY_CHANGE} THEN 1 ELSE 0 END,
    updated_at = CASE WHEN {_MAY_CHANGE} THEN :now ELSE m.updated_at END
WHERE m.tenant_id = :tenant_id AND m.id = :memory_id AND {SERVABLE}""")


class FeedbackRepository:
    """Relevance moves within [floor, ceiling]. A memory of a trust level the caller may not
    write never sinks below `trusted_floor` (nor below where it already is) by that
    caller's feedback, which leaves its version and metadata alone; a caller who may write
    it counts one reuse. A quarantined or altered row is not touched (None)."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def apply(
        self,
        memory_id: UUID,
        delta: float,
        bounds: tuple[float, float, float],
        writable: Sequence[str],
    ) -> Memory | None:
        floor, trusted_floor, ceiling = bounds
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "memory_id": memory_id,
            "delta": delta,
            "floor": floor,
            "trusted_floor": trusted_floor,
            "ceiling": ceiling,
            "writable": list(writable),
            "now": datetime.now(UTC),
        }
        row = await conn.fetchrow(*named(_FEEDBACK, values))
        return to_memory(row) if row else None


@dataclass(frozen=True, slots=True)
class PendingEmbedding:
    id: UUID
    content: str
    name: str | None
    category: str | None
    context: str | None


class PendingEmbeddingRepository:
    """Memories stored while the embedding provider was down."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def pending(self, limit: int) -> list[PendingEmbedding]:
        conn = await self._uow.connection()
        rows = await conn.fetch(
            *named(
                "SELECT id, content, name, category, context FROM memories"
                " WHERE tenant_id = :tenant_id AND embedding IS NULL ORDER BY created_at"
                " LIMIT :limit",
                {"tenant_id": self._uow.tenant_id, "limit": limit},
            )
        )
        return [
            PendingEmbedding(r["id"], r["content"], r["name"], r["category"], r["context"])
            for r in rows
        ]

    async def fill(self, vectors: Sequence[tuple[UUID, Sequence[float]]]) -> int:
        conn = await self._uow.connection()
        sql = """
            WITH filled AS (
                UPDATE memories m SET embedding = v.embedding::vector
                FROM unnest(:ids::uuid[], :vectors::text[]) AS v(id, embedding)
                WHERE m.tenant_id = :tenant_id AND m.id = v.id AND m.embedding IS NULL
                  AND memory_vector_fits(:model)
                RETURNING 1
            )
            SELECT count(*) FROM filled
            """
        values = {
            "tenant_id": self._uow.tenant_id,
            "ids": [memory_id for memory_id, _ in vectors],
            # As text: the pgvector codec encodes one vector, not an array of them.
            "vectors": ["[" + ",".join(map(repr, map(float, v))) + "]" for _, v in vectors],
            "model": self._uow.embedding_model,
        }
        filled = await conn.fetchval(*named(sql, values))
        return int(filled)
