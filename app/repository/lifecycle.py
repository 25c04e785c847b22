"""Pruning, restore, supersede and edits: the statements that move a memory through its life."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.fields import EDITABLE_FIELDS
from app.domain.memory import Memory
from app.domain.sessions import CommitChange, changed_after
from app.repository.filters import only_repository_rows
from app.repository.rows import (
    ACCESS_COUNT,
    MEMORY_COLUMNS,
    SERVABLE,
    returning_memories,
    to_memory,
)
from app.repository.sql import named


@dataclass(frozen=True, slots=True)
class PruneRules:
    unused_days: int  # archive after this many days with no access at all
    stale_days: int  # ... or after this many with fewer than `stale_min_accesses`
    stale_min_accesses: int

    def values(self) -> dict[str, int]:
        """Its thresholds by the names PRUNABLE binds."""
        return {
            "unused_days": self.unused_days,
            "stale_days": self.stale_days,
            "stale_min_accesses": self.stale_min_accesses,
        }


@dataclass(frozen=True, slots=True)
class PruneCandidate:
    id: UUID
    memory_type: str
    version: int  # after the prune (as it was, on a dry run)
    personal_to: UUID | None = None  # a personal memory's person (migration 0045)


# What the forgetting curve archives (and /stats counts): live (memory_is_live: not
# archived, superseded or quarantined), not pinned, and old without being used (its two
# thresholds, PruneRules.values()). Age is time since the memory was stored; the first age
# bound is the younger one, a range of memories_prune_key.
PRUNABLE = f"""memory_is_live(m) AND NOT m.pinned
      AND m.created_at < now() - make_interval(days => least(:unused_days::int, :stale_days::int))
      AND (   (m.created_at < now() - make_interval(days => :unused_days)
               AND {ACCESS_COUNT} = 0)
           OR (m.created_at < now() - make_interval(days => :stale_days)
               AND {ACCESS_COUNT} < :stale_min_accesses))"""

_PRUNE = f"""
WITH candidates AS (
    SELECT m.id, m.memory_type, m.version, m.personal_to
    FROM memories m
    WHERE m.tenant_id = :tenant_id AND {only_repository_rows()}
      AND {PRUNABLE}
),
archived AS (
    UPDATE memories m SET archived_at = now(), archived_by_admin = false, updated_at = now(),
                          version = m.version + 1
    FROM candidates c
    WHERE NOT :dry_run AND m.tenant_id = :tenant_id AND m.id = c.id
    RETURNING m.id, m.version
)
SELECT c.id, c.memory_type, coalesce(a.version, c.version) AS version, c.personal_to
FROM candidates c LEFT JOIN archived a USING (id)
ORDER BY c.memory_type, c.id
"""


class LifecycleRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    @property
    def tenant_id(self) -> str:
        return self._uow.tenant_id

    async def try_prune_lock(self) -> bool:
        """Held until the transaction ends: two processes never prune one tenant at once."""
        conn = await self._uow.connection()
        got: bool = await conn.fetchval(
            *named(
                "SELECT pg_try_advisory_xact_lock("
                "hashtextextended('agent-memory:prune:' || :tenant_id, 0))",
                {"tenant_id": self.tenant_id},
            )
        )
        return got

    async def prune(
        self, rules: PruneRules, source_repo: str | None, dry_run: bool
    ) -> list[PruneCandidate]:
        conn = await self._uow.connection()
        values = {
            "tenant_id": self.tenant_id,
            "source_repo": source_repo,
            "dry_run": dry_run,
            **rules.values(),
        }
        rows = await conn.fetch(*named(_PRUNE, values))
        return [
            PruneCandidate(r["id"], r["memory_type"], r["version"], r["personal_to"]) for r in rows
        ]

    async def archive(self, memory_id: UUID) -> Memory | None:
        """Archived now by an admin's hand (kept as it was if an admin archived it already;
        one the forgetting curve archived is now held by the admin's hand)."""
        return await self._change_or_read(
            memory_id,
            "archived_at = now(), archived_by_admin = true, version = m.version + 1,"
            " updated_at = now()",
            "NOT m.archived_by_admin",
        )

    async def restore(self, memory_id: UUID) -> Memory | None:
        """Back in search (kept as it was if not archived)."""
        return await self._change_or_read(
            memory_id,
            "archived_at = NULL, archived_by_admin = false, version = m.version + 1,"
            " updated_at = now()",
            "m.archived_at IS NOT NULL",
        )

    async def approve(self, memory_id: UUID) -> Memory | None:
        """A person approved a held memory: handed over unasked from now on (kept as it was
        if not held). Its provenance stays: a search still shows where it came from."""
        return await self._change_or_read(
            memory_id,
            "held_at = NULL, version = m.version + 1, updated_at = now(),"
            " provenance = coalesce(m.provenance, '{}')"
            " || jsonb_build_object('approved_at', now())",
            f"m.held_at IS NOT NULL AND {SERVABLE}",
        )

    async def held(self, limit: int) -> list[Memory]:
        """The memories waiting for a person's review, oldest first (memories_held_key)."""
        conn = await self._uow.connection()
        sql = (
            f"SELECT {MEMORY_COLUMNS} FROM memories m"
            " WHERE m.tenant_id = :tenant_id AND m.held_at IS NOT NULL AND memory_is_live(m)"
            f" AND {SERVABLE} ORDER BY m.held_at, m.id LIMIT :row_limit"
        )
        rows = await conn.fetch(*named(sql, {"tenant_id": self.tenant_id, "row_limit": limit}))
        return [to_memory(row) for row in rows]

    async def _change_or_read(
        self, memory_id: UUID, assignments: str, applies: str
    ) -> Memory | None:
        """The change where it applies, else the row as it is: a second statement only for
        a change that was already made. (Not one statement with CASE: Citus refuses now()
        inside CASE or coalesce in an UPDATE.) A concurrent identical change waits on the
        row lock, finds it made, and reads the row afterwards."""
        conn = await self._uow.connection()
        which = {"tenant_id": self.tenant_id, "memory_id": memory_id}
        row = await conn.fetchrow(
            *named(
                returning_memories(
                    f"UPDATE memories AS m SET {assignments}"
                    f" WHERE m.tenant_id = :tenant_id AND m.id = :memory_id AND {applies}"
                ),
                which,
            )
        )
        if row is None:
            row = await conn.fetchrow(
                *named(
                    f"SELECT {MEMORY_COLUMNS} FROM memories m"
                    " WHERE m.tenant_id = :tenant_id AND m.id = :memory_id",
                    which,
                )
            )
        return to_memory(row) if row else None

    async def mark_superseded(
        self, old_id: UUID, new_id: UUID, expected_version: int | None
    ) -> bool:
        """Only a memory not already superseded (and, with If-Match, still at the expected
        version) can be; False otherwise."""
        conn = await self._uow.connection()
        done = await conn.fetchval(
            *named(
                "UPDATE memories SET superseded_by = :new_id, version = version + 1,"
                " updated_at = now()"
                " WHERE tenant_id = :tenant_id AND id = :old_id AND superseded_by IS NULL"
                " AND (:expected_version::int IS NULL OR version = :expected_version)"
                " RETURNING true",
                {
                    "tenant_id": self.tenant_id,
                    "old_id": old_id,
                    "new_id": new_id,
                    "expected_version": expected_version,
                },
            )
        )
        return bool(done)

    async def update_fields(
        self,
        memory_id: UUID,
        fields: dict[str, Any],
        expected_version: int | None,
        trust_levels: Sequence[str],
    ) -> Memory | None:
        """Set the given editable fields (tags, pinned, confidence, category, metadata) of a
        memory whose trust level is one of `trust_levels`; None when the memory is missing,
        of another trust level, or, with If-Match, no longer at that version."""
        conn = await self._uow.connection()
        names = [name for name in EDITABLE_FIELDS if name in fields]
        assignments = "".join(f"{name} = :{name}, " for name in names)
        sql = (
            # An edit is a look at the memory: no longer possibly stale.
            f"UPDATE memories AS m SET {assignments}stale_since = NULL, stale_reason = NULL,"
            " version = m.version + 1, updated_at = now()"
            " WHERE m.tenant_id = :tenant_id AND m.id = :memory_id"
            " AND (:expected_version::int IS NULL OR m.version = :expected_version)"
            " AND m.trust_level = ANY(:trust_levels::text[])"
        )
        values = {
            "tenant_id": self.tenant_id,
            "memory_id": memory_id,
            "expected_version": expected_version,
            "trust_levels": list(trust_levels),
            **{name: fields[name] for name in names},
        }
        row = await conn.fetchrow(*named(returning_memories(sql), values))
        return to_memory(row) if row else None


# A file a memory is about changed between the repository's last session and this one:
# the memory is possibly stale (until reinforced, edited or confirmed). Two statements, the
# rows first and then their marks (Citus takes no stable function of a column in an
# UPDATE); the reasons (which of its files changed, at which commit) are made between.
# The changed files are the caller's word, which the server cannot check against git: they
# mark only memories of a trust the caller may write (an agent's list never marks a
# person's or the operator's rule).
_STALE_CANDIDATES = """
SELECT m.id, m.files, m.git_commit FROM memories m
WHERE m.tenant_id = :tenant_id AND m.source_repo = :source_repo
  AND m.files && :changed::text[] AND m.stale_since IS NULL
  AND memory_is_live(m)
  AND m.trust_level = ANY(:writable::text[])
ORDER BY m.id
FOR NO KEY UPDATE
"""

_MARK_STALE = """
UPDATE memories AS m SET stale_since = now(), stale_reason = r.reason, version = m.version + 1
FROM unnest(:ids::uuid[], :reasons::jsonb[]) AS r(id, reason)
WHERE m.tenant_id = :tenant_id AND m.id = r.id
RETURNING m.id, m.version
"""

_CONFIRM = returning_memories(
    """
UPDATE memories AS m SET
    stale_since = NULL, stale_reason = NULL,
    git_commit = coalesce(:git_commit::text, m.git_commit),
    version = m.version + 1, updated_at = now()
WHERE m.tenant_id = :tenant_id AND m.id = :memory_id AND m.trust_level = ANY(:writable::text[])"""
)


class StalenessRepository:
    """Which memories' code changed since they were written, and their confirmation."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def mark(
        self,
        source_repo: str,
        changed: Sequence[str],
        history: Sequence[CommitChange],
        git_commit: str | None,
        writable: Sequence[str],
    ) -> dict[UUID, int]:
        """The memories marked (those with a file changed after they were written: the
        domain's `changed_after`), each with the version the mark left it at."""
        conn = await self._uow.connection()
        tenant = self._uow.tenant_id
        found = await conn.fetch(
            *named(
                _STALE_CANDIDATES,
                {
                    "tenant_id": tenant,
                    "source_repo": source_repo,
                    "changed": list(changed),
                    "writable": list(writable),
                },
            )
        )
        stale = {
            row["id"]: files
            for row in found
            if (files := changed_after(row["files"], row["git_commit"], changed, history))
        }
        if not stale:
            return {}
        reasons = [{"files": files, "commit": git_commit} for files in stale.values()]
        ids = list(stale)
        values = {"tenant_id": tenant, "ids": ids, "reasons": reasons}
        marked = await conn.fetch(*named(_MARK_STALE, values))
        return {row["id"]: row["version"] for row in marked}

    async def confirm(
        self, memory_id: UUID, git_commit: str | None, writable: Sequence[str]
    ) -> Memory | None:
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "memory_id": memory_id,
            "git_commit": git_commit,
            "writable": list(writable),
        }
        row = await conn.fetchrow(*named(_CONFIRM, values))
        return to_memory(row) if row else None
