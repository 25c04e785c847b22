"""The review queue's drafts (migration 0041; their evidence and key, 0044): queued once
each, listed newest first, decided (kept or dropped) once, a dropped one restored."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.drafts import EVIDENCE_KEYS, DraftEntry, QueuedDraft
from app.repository.sql import named

DRAFT_COLUMNS = (
    "id, kind, text, files, source_repo, client, client_session, seen_at, sources, status,"
    " queued_at, decided_at, memory_id, evidence, key, personal"
)

# One statement a batch: a draft already queued (same fingerprint, whatever its status) is
# passed over, and what was new comes back.
_QUEUE = """
INSERT INTO drafts (tenant_id, person_id, kind, text, files, source_repo, client, client_session,
                    seen_at, sources, evidence, key, fingerprint, personal)
SELECT :tenant_id, :person_id, d.kind, d.text, d.files, d.source_repo, d.client, d.client_session,
       coalesce(d.seen_at, now()), d.sources, d.evidence, d.key, d.fingerprint, d.personal
FROM jsonb_to_recordset(:drafts::jsonb) AS d(kind text, text text, files text[],
     source_repo text, client text, client_session text, seen_at timestamptz,
     sources text[], evidence jsonb, key text, fingerprint text, personal boolean)
ON CONFLICT (tenant_id, fingerprint) DO NOTHING
RETURNING id
"""

# The pending drafts, newest first: a page after the cursor (seen_at, id).
_PENDING = f"""
SELECT {DRAFT_COLUMNS} FROM drafts
WHERE tenant_id = :tenant_id AND status = 'pending'
  AND (:source_repo::text IS NULL OR source_repo = :source_repo)
  AND (:after_seen::timestamptz IS NULL OR (seen_at, id) < (:after_seen, :after_id::uuid))
ORDER BY seen_at DESC, id DESC
LIMIT :limit
"""


def draft_entry(row: Any) -> DraftEntry:
    values = {key: row[key] for key in DRAFT_COLUMNS.split(", ")}
    # jsonb keeps no order of keys: the evidence comes back in EVIDENCE_KEYS' order.
    evidence = {k: row["evidence"][k] for k in EVIDENCE_KEYS if k in row["evidence"]}
    lists = {"files": tuple(row["files"]), "sources": tuple(row["sources"])}
    return DraftEntry(**{**values, **lists, "evidence": evidence})


def as_row(draft: QueuedDraft) -> dict[str, Any]:
    return {
        "kind": draft.kind,
        "text": draft.text,
        "files": list(draft.files),
        "source_repo": draft.source_repo,
        "client": draft.client,
        "client_session": draft.client_session,
        "seen_at": draft.seen_at.isoformat() if draft.seen_at else None,
        "sources": list(draft.sources),
        "evidence": dict(draft.evidence),
        "key": draft.key,
        "fingerprint": draft.fingerprint,
        "personal": draft.personal_to is not None,
    }


class DraftRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def queue(self, drafts: Sequence[QueuedDraft]) -> list[UUID]:
        """The ids of the drafts that were not queued before."""
        if not drafts:
            return []
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "person_id": self._uow.person_id,  # who queued them
            "drafts": [as_row(d) for d in drafts],
        }
        return [row["id"] for row in await conn.fetch(*named(_QUEUE, values))]

    async def pending(
        self, source_repo: str | None, limit: int, after: tuple[datetime, UUID] | None
    ) -> list[DraftEntry]:
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "source_repo": source_repo,
            "after_seen": after[0] if after else None,
            "after_id": after[1] if after else None,
            "limit": limit,
        }
        return [draft_entry(row) for row in await conn.fetch(*named(_PENDING, values))]

    async def get(self, draft_id: UUID, *, for_update: bool = False) -> DraftEntry | None:
        conn = await self._uow.connection()
        lock = " FOR UPDATE" if for_update else ""
        sql = f"SELECT {DRAFT_COLUMNS} FROM drafts WHERE tenant_id = :tenant_id AND id = :id{lock}"
        row = await conn.fetchrow(*named(sql, {"tenant_id": self._uow.tenant_id, "id": draft_id}))
        return draft_entry(row) if row else None

    async def lock_pending(self, draft_ids: Sequence[UUID]) -> list[DraftEntry]:
        """The pending drafts among the ids, locked for the caller's transaction in one
        statement, in the order of their ids: two bulk keeps over the same drafts take
        their locks in the same order, so neither waits on the other's half."""
        conn = await self._uow.connection()
        sql = f"""
            SELECT {DRAFT_COLUMNS} FROM drafts
            WHERE tenant_id = :tenant_id AND id = ANY(:ids::uuid[]) AND status = 'pending'
            ORDER BY id
            FOR UPDATE
            """
        values = {"tenant_id": self._uow.tenant_id, "ids": list(draft_ids)}
        return [draft_entry(row) for row in await conn.fetch(*named(sql, values))]

    async def decide(
        self,
        draft_ids: Sequence[UUID],
        status: str,
        memory_id: UUID | None = None,
    ) -> list[DraftEntry]:
        """Pending drafts kept (with the memory they became) or dropped; a dropped one put
        back to pending (status 'pending'). Those not in the state it leaves are passed
        over: what changed comes back."""
        conn = await self._uow.connection()
        # Two forms, not CASE: Citus takes no now() inside CASE.
        restoring = status == "pending"
        sql = f"""
            UPDATE drafts
            SET status = :status, memory_id = :memory_id,
                decided_at = {"NULL" if restoring else "now()"}
            WHERE tenant_id = :tenant_id AND id = ANY(:ids::uuid[])
              AND status = '{"dropped" if restoring else "pending"}'
            RETURNING {DRAFT_COLUMNS}
            """
        values = {
            "tenant_id": self._uow.tenant_id,
            "ids": list(draft_ids),
            "status": status,
            "memory_id": memory_id,
        }
        return [draft_entry(row) for row in await conn.fetch(*named(sql, values))]

    async def recently_dropped(self, limit: int) -> list[DraftEntry]:
        """The last drafts dropped, last first: what a person may want back."""
        conn = await self._uow.connection()
        sql = f"""
            SELECT {DRAFT_COLUMNS} FROM drafts
            WHERE tenant_id = :tenant_id AND status = 'dropped'
            ORDER BY decided_at DESC, id DESC
            LIMIT :limit
            """
        values = {"tenant_id": self._uow.tenant_id, "limit": limit}
        return [draft_entry(row) for row in await conn.fetch(*named(sql, values))]


# Which drafts say what a live memory already says, in its repository or globally (the
# content's hash, through the dedup key): those an import passes over. One lookup each,
# as the store's batch check makes it (app/repository/memory_writes.py).
_HELD = """
SELECT n.ord
FROM unnest(:texts::text[], :source_repos::text[]) WITH ORDINALITY AS n(text, source_repo, ord)
CROSS JOIN LATERAL (
    SELECT 1 FROM memories m
    WHERE m.tenant_id = :tenant_id AND m.content_hash = memory_content_hash(n.text)
      AND (m.source_repo = n.source_repo OR m.source_repo IS NULL) AND memory_is_live(m)
    LIMIT 1
) held
"""

# A scope's drafts of rules written in files (FILE_CLIENT) whose key its files no longer
# hold: kept (their memories may go) or pending; a dropped one is a person's no already.
_UNWRITTEN = f"""
SELECT {DRAFT_COLUMNS} FROM drafts d
WHERE d.tenant_id = :tenant_id AND d.client = :client AND d.key IS NOT NULL
  AND d.status <> 'dropped' AND d.source_repo IS NOT DISTINCT FROM :source_repo
  AND NOT EXISTS (SELECT 1 FROM unnest(:keys::text[]) AS w(key) WHERE w.key = d.key)
ORDER BY d.seen_at DESC, d.id DESC
LIMIT :limit
"""


# A pending retirement of a memory whose rule its files hold again (put back since it was
# deleted): no longer asked, the proposal taken back (a decided one stays as decided).
_WRITTEN_AGAIN = """
DELETE FROM proposals p
WHERE p.tenant_id = :tenant_id AND p.kind = :kind AND p.status = 'pending'
  AND EXISTS (
      SELECT 1 FROM drafts d
      WHERE d.tenant_id = :tenant_id AND d.client = :client AND d.status = 'kept'
        AND d.source_repo IS NOT DISTINCT FROM :source_repo AND d.memory_id = p.memory_ids[1]
        AND d.key = ANY(:keys::text[])
  )
RETURNING p.id
"""


class WrittenRepository:
    """What the review queue knows of rules written in files, and of memories already
    held (an import's checks, beside DraftRepository's queue)."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def held(self, drafts: Sequence[QueuedDraft]) -> set[int]:
        """The indexes of the drafts a live memory already says (their repository's, or a
        global one)."""
        if not drafts:
            return set()
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "texts": [d.text for d in drafts],
            "source_repos": [d.source_repo for d in drafts],
        }
        return {int(row["ord"]) - 1 for row in await conn.fetch(*named(_HELD, values))}

    async def written_again(
        self, kind: str, client: str, source_repo: str | None, keys: Sequence[str]
    ) -> int:
        """How many pending proposals of `kind` were taken back: their memory's rule is
        among `keys` again."""
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "kind": kind,
            "client": client,
            "source_repo": source_repo,
            "keys": list(keys),
        }
        return len(await conn.fetch(*named(_WRITTEN_AGAIN, values)))

    async def unwritten(
        self, client: str, source_repo: str | None, keys: Sequence[str], limit: int
    ) -> list[DraftEntry]:
        """A scope's drafts of `client` whose key is none of `keys`, newest first."""
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "client": client,
            "source_repo": source_repo,
            "keys": list(keys),
            "limit": limit,
        }
        return [draft_entry(row) for row in await conn.fetch(*named(_UNWRITTEN, values))]
