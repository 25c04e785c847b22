"""Tidy's SQL: proposals (migration 0042), the near pairs and stale memories they are made from,
and the proposals themselves: saved once each (a dismissed one comes back only when one of
its memories changed), listed while all their memories are live, decided once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.filters import MemoryFilter
from app.domain.tidy import Candidate, NearPair, Proposal, ProposalEntry
from app.repository.nearest import nearest_rows
from app.repository.rows import ACCESS_COUNT, LAST_ACCESSED_AT
from app.repository.sql import named

# What a proposal weighs: a live memory no person is yet asked to approve.
_WEIGHED = "memory_is_live(m) AND m.held_at IS NULL"
_CANDIDATE = (
    "m.id, m.content, m.memory_type, m.source_repo, m.version, m.created_at,"
    f" {ACCESS_COUNT} AS access_count"
)

# A page of live memories (by id), of one repository's (or, with :global, the global
# memories'), each with its nearest live ones of the same scope at `min_similarity` or
# nearer, read through the one read of the nearest (app/repository/nearest.py: exact for a
# scope small beside the graph, the graph past it, a repository's own graph where it has
# one), the page's vectors in one call: each pair once (the second's id is the greater).
_IN_SCOPE = "(CASE WHEN :global THEN m.source_repo IS NULL ELSE m.source_repo = :source_repo END)"
_PAGE = f"""
    SELECT m.id, m.embedding FROM memories m
    WHERE m.tenant_id = :tenant_id AND {_WEIGHED} AND m.embedding IS NOT NULL
      AND {_IN_SCOPE} AND (:after::uuid IS NULL OR m.id > :after)
    ORDER BY m.id
    LIMIT :limit"""
_NEAR = (
    "near.id AS near_id, near.content AS near_content, near.memory_type AS near_type,"
    " near.source_repo AS near_repo, near.version AS near_version,"
    " near.created_at AS near_created_at,"
    " coalesce((SELECT a.access_count FROM memory_access a"
    " WHERE a.tenant_id = :tenant_id AND a.memory_id = near.id), 0) AS near_access_count"
)


def _near_pairs(nearest: str) -> str:
    """The page's pairs, `nearest`: the call of the one read for the page's vectors."""
    return f"""
WITH page AS MATERIALIZED (
    SELECT p.id, row_number() OVER (ORDER BY p.id) AS ord, p.embedding FROM ({_PAGE}) p
)
SELECT {_CANDIDATE}, {_NEAR}, n.vector_similarity AS similarity
FROM {nearest} n
JOIN page p ON p.ord = n.ord
JOIN memories m ON m.tenant_id = :tenant_id AND m.id = p.id
JOIN memories near ON near.tenant_id = :tenant_id AND near.id = n.id
WHERE n.id <> p.id AND n.vector_similarity >= :min_similarity
ORDER BY m.id, n.vector_similarity DESC
"""


_LAST_OF_PAGE = f"SELECT page.id FROM ({_PAGE}) page ORDER BY page.id DESC LIMIT 1"

# Each repository's live memories with vectors (the global ones as NULL), and how many.
_SCOPES = f"""
SELECT m.source_repo, count(*) AS n FROM memories m
WHERE m.tenant_id = :tenant_id AND {_WEIGHED} AND m.embedding IS NOT NULL
GROUP BY m.source_repo
"""

# Possibly stale for `days` or more, and not read since it was marked.
_STALE_UNREAD = f"""
SELECT {_CANDIDATE}, m.stale_reason
FROM memories m
WHERE m.tenant_id = :tenant_id AND {_WEIGHED}
  AND m.stale_since < now() - make_interval(days => :days)
  AND coalesce({LAST_ACCESSED_AT}, '-infinity') < m.stale_since
ORDER BY m.stale_since
LIMIT :limit
"""

_SAVE = """
INSERT INTO proposals AS p (tenant_id, kind, memory_ids, source_repo, similarity, reason,
                            fingerprint, contents)
SELECT :tenant_id, x.kind, x.memory_ids, x.source_repo, x.similarity, x.reason,
       x.fingerprint, x.contents
FROM jsonb_to_recordset(:proposals::jsonb) AS x(kind text, memory_ids uuid[],
     source_repo text, similarity real, reason text, fingerprint text, contents text)
ON CONFLICT (tenant_id, fingerprint) DO UPDATE
    SET status = 'pending', contents = excluded.contents, reason = excluded.reason,
        memory_ids = excluded.memory_ids, similarity = excluded.similarity,
        created_at = excluded.created_at, decided_at = NULL, audit_id = NULL
    WHERE p.status = 'dismissed' AND p.contents <> excluded.contents
RETURNING p.id
"""

PROPOSAL_COLUMNS = (
    "id, kind, memory_ids, source_repo, similarity, reason, status, created_at, decided_at,"
    " audit_id"
)

# Pending, and every memory it names still live: one that a person archived or merged by
# hand since is not asked about.
_ASKED = f"""p.tenant_id = :tenant_id AND p.status = 'pending'
  AND (SELECT count(*) FROM memories m
       WHERE m.tenant_id = :tenant_id AND m.id = ANY(p.memory_ids) AND {_WEIGHED})
      = cardinality(p.memory_ids)"""
_PENDING = f"""
SELECT {PROPOSAL_COLUMNS} FROM proposals p
WHERE {_ASKED} AND p.kind = ANY(:kinds::text[])
ORDER BY p.created_at DESC, p.id DESC
LIMIT :limit
"""
# How many of each kind a person would be asked about.
_PENDING_BY_KIND = f"SELECT p.kind, count(*) AS n FROM proposals p WHERE {_ASKED} GROUP BY p.kind"


def proposal_row(row: Any) -> ProposalEntry:
    values = {key: row[key] for key in PROPOSAL_COLUMNS.split(", ")}
    return ProposalEntry(**{**values, "memory_ids": tuple(row["memory_ids"])})


def candidate(row: Any, prefix: str = "") -> Candidate:
    if not prefix:
        return Candidate(
            row["id"], row["content"], row["memory_type"], row["source_repo"],
            row["version"], row["created_at"], row["access_count"],
        )  # fmt: skip
    return Candidate(
        row["near_id"], row["near_content"], row["near_type"], row["near_repo"],
        row["near_version"], row["near_created_at"], row["near_access_count"],
    )  # fmt: skip


class TidyRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def scopes(self) -> list[tuple[str | None, int]]:
        """Each repository with live memories to weigh, and how many (None: the global)."""
        conn = await self._uow.connection()
        rows = await conn.fetch(*named(_SCOPES, {"tenant_id": self._uow.tenant_id}))
        return [(r["source_repo"], int(r["n"])) for r in rows]

    def _scope(self, source_repo: str | None) -> dict[str, Any]:
        return {
            "tenant_id": self._uow.tenant_id, "global": source_repo is None,
            "source_repo": source_repo,
        }  # fmt: skip

    async def near_pairs(
        self,
        source_repo: str | None,
        after: UUID | None,
        limit: int,
        nearest: int,
        min_similarity: float,
    ) -> tuple[list[NearPair], UUID | None]:
        """The near pairs of a page of a repository's live memories (each memory's `nearest`
        others: a pair read from both sides comes twice, once from each page it is on, and
        domain.tidy.each_pair_once keeps one), and the page's last id (None: none left)."""
        conn = await self._uow.connection()
        values = {**self._scope(source_repo), "after": after, "limit": limit}
        last = await conn.fetchval(*named(_LAST_OF_PAGE, values))
        if last is None:
            return [], None
        more: dict[str, Any] = {**values, "min_similarity": min_similarity}

        def bind(value: Any, name: str) -> str:
            more[name] = value
            return f":{name}"

        # Its neighbours as a person weighs them: live, none held for a person's review.
        scope = MemoryFilter(source_repo=source_repo, include_global=False, include_held=False)
        queries = "ARRAY(SELECT p.embedding FROM page p ORDER BY p.ord)"
        # One more than asked: each memory finds itself first.
        read = nearest_rows(queries, bind(nearest + 1, "nearest"), scope, bind,
                            global_only=source_repo is None)  # fmt: skip
        rows = await conn.fetch(*named(_near_pairs(read), more))
        pairs = [NearPair(candidate(r), candidate(r, "near"), float(r["similarity"])) for r in rows]
        return pairs, last

    async def stale_unread(
        self, days: int, limit: int
    ) -> list[tuple[Candidate, dict[str, Any] | None]]:
        conn = await self._uow.connection()
        values = {"tenant_id": self._uow.tenant_id, "days": days, "limit": limit}
        rows = await conn.fetch(*named(_STALE_UNREAD, values))
        return [(candidate(r), r["stale_reason"]) for r in rows]

    async def save(self, proposals: Sequence[Proposal]) -> int:
        """How many were new (or came back: dismissed, their memories changed since)."""
        if not proposals:
            return 0
        conn = await self._uow.connection()
        rows = [
            {
                "kind": p.kind, "memory_ids": [str(i) for i in p.memory_ids],
                "source_repo": p.source_repo, "similarity": p.similarity, "reason": p.reason,
                "fingerprint": p.fingerprint, "contents": p.contents,
            }
            for p in proposals
        ]  # fmt: skip
        values = {"tenant_id": self._uow.tenant_id, "proposals": rows}
        return len(await conn.fetch(*named(_SAVE, values)))

    async def pending(self, kinds: Sequence[str], limit: int) -> list[ProposalEntry]:
        conn = await self._uow.connection()
        values = {"tenant_id": self._uow.tenant_id, "kinds": list(kinds), "limit": limit}
        return [proposal_row(r) for r in await conn.fetch(*named(_PENDING, values))]

    async def pending_by_kind(self) -> dict[str, int]:
        conn = await self._uow.connection()
        rows = await conn.fetch(*named(_PENDING_BY_KIND, {"tenant_id": self._uow.tenant_id}))
        return {r["kind"]: int(r["n"]) for r in rows}

    async def recently_decided(self, limit: int) -> list[ProposalEntry]:
        """The last accepted or dismissed, last first: what a person may want to undo."""
        conn = await self._uow.connection()
        sql = f"""
            SELECT {PROPOSAL_COLUMNS} FROM proposals
            WHERE tenant_id = :tenant_id AND status <> 'pending'
            ORDER BY decided_at DESC, id DESC
            LIMIT :limit
            """
        values = {"tenant_id": self._uow.tenant_id, "limit": limit}
        return [proposal_row(r) for r in await conn.fetch(*named(sql, values))]

    async def get(self, proposal_id: UUID) -> ProposalEntry | None:
        conn = await self._uow.connection()
        sql = (
            f"SELECT {PROPOSAL_COLUMNS} FROM proposals"
            " WHERE tenant_id = :tenant_id AND id = :id FOR UPDATE"
        )
        row = await conn.fetchrow(
            *named(sql, {"tenant_id": self._uow.tenant_id, "id": proposal_id})
        )
        return proposal_row(row) if row else None

    async def decide(self, proposal_id: UUID, status: str, audit_id: UUID | None) -> None:
        conn = await self._uow.connection()
        # Two forms, not CASE: Citus takes no now() inside CASE.
        decided = "NULL" if status == "pending" else "now()"
        sql = f"""
            UPDATE proposals SET status = :status, audit_id = :audit_id, decided_at = {decided}
            WHERE tenant_id = :tenant_id AND id = :id
            """
        values = {
            "tenant_id": self._uow.tenant_id, "id": proposal_id, "status": status,
            "audit_id": audit_id,
        }  # fmt: skip
        await conn.execute(*named(sql, values))
