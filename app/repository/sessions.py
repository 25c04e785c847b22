"""Sessions, and the rows a session-start snapshot is made of."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.provenance import Exposure
from app.domain.sessions import Session, SessionStartRequest
from app.repository.filters import only_repository_rows
from app.repository.rows import INTACT
from app.repository.sql import named

SESSION_COLUMNS = (
    "id, source_repo, agent, task, status, summary, key_changes, started_at, ended_at,"
    " git_branch, git_commit"
)


# A session's drafts and the untrusted sources it read.
Held = tuple[list[dict[str, Any]], list[str]]


def session_of(row: Any) -> Session:
    return Session(**{key: row[key] for key in SESSION_COLUMNS.split(", ")})


# Everything the snapshot shows, in one round trip: each part as a JSON array.
_SNAPSHOT = f"""
WITH scope AS (
    SELECT m.id, m.memory_type, m.category, m.name, m.content, m.metadata, m.pinned,
           m.trust_level, m.created_at, m.content_hash, m.context, m.context_hash,
           m.source_repo IS NULL AS global, m.stale_reason,
           -- A guardrail is a pinned memory a person or the operator stands behind; an
           -- agent's own pin keeps its memory from fading, nothing more.
           (m.pinned AND m.trust_level <> 'agent') AS guardrail
    FROM memories m
    -- A repository's snapshot holds its memories and the global ones (filed under none).
    WHERE m.tenant_id = :tenant_id
      AND (:source_repo::text IS NULL OR m.source_repo = :source_repo OR m.source_repo IS NULL)
      AND memory_is_live(m)
      -- Handed over unasked: what waits for a person's review is not (provenance.py).
      AND m.held_at IS NULL
),
recent AS (
    SELECT s.*, row_number() OVER (PARTITION BY s.kind ORDER BY s.created_at DESC, s.id DESC)
               AS nth
    FROM (
        SELECT scope.*, CASE WHEN memory_type = 'decision' THEN 'decision'
                             WHEN memory_type = 'error_pattern' THEN 'error_pattern'
                             ELSE 'learning' END AS kind
        FROM scope
        WHERE NOT guardrail AND memory_type IN ('decision', 'error_pattern', 'learning', 'pattern',
                                             'heuristic', 'anti_pattern')
    ) s
)
SELECT
    (SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.ended_at DESC), '[]'::jsonb) FROM (
        SELECT id, agent, task, summary, key_changes, ended_at FROM sessions
        WHERE tenant_id = :tenant_id AND status = 'completed'
          AND {only_repository_rows("source_repo")}
        ORDER BY ended_at DESC LIMIT 10) x) AS sessions,
    (SELECT coalesce(jsonb_agg(to_jsonb(g) ORDER BY g.created_at DESC), '[]'::jsonb) FROM (
        SELECT id, memory_type, category, name, content, metadata, trust_level, global,
               stale_reason, created_at
        FROM scope m WHERE guardrail AND memory_type <> 'decision' AND {INTACT}) g)
        AS guardrails,
    (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.kind, r.nth), '[]'::jsonb) FROM (
        SELECT kind, nth, id, memory_type, category, name, content, metadata, trust_level,
               global, stale_reason, created_at
        FROM recent m
        WHERE nth <= :per_kind AND created_at >= now() - make_interval(days => :recent_days)
          AND {INTACT}) r)
        AS recent,
    (SELECT coalesce(jsonb_object_agg(kind, n), '{{}}'::jsonb) FROM (
        SELECT kind, count(*) AS n FROM recent
        WHERE nth > :per_kind OR created_at < now() - make_interval(days => :recent_days)
        GROUP BY kind) o) AS older
"""


@dataclass(frozen=True, slots=True)
class SnapshotRows:
    sessions: list[dict[str, Any]]
    guardrails: list[dict[str, Any]]
    recent: list[dict[str, Any]]
    older: dict[str, int]


class SessionRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def start(self, request: SessionStartRequest) -> Session:
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "source_repo": request.source_repo,
            "agent": request.agent,
            "task": request.task,
            "git_branch": request.git_branch,
            "git_commit": request.git_commit,
        }
        row = await conn.fetchrow(
            *named(
                "INSERT INTO sessions (tenant_id, source_repo, agent, task, git_branch, git_commit)"
                " VALUES (:tenant_id, :source_repo, :agent, :task, :git_branch, :git_commit)"
                f" RETURNING {SESSION_COLUMNS}",
                values,
            )
        )
        return session_of(row)

    async def recent(self, source_repo: str | None, limit: int) -> list[Session]:
        """Newest first, active ones included."""
        conn = await self._uow.connection()
        rows = await conn.fetch(
            *named(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant_id = :tenant_id"
                f" AND {only_repository_rows('source_repo')}"
                " ORDER BY started_at DESC, id DESC LIMIT :limit",
                {"tenant_id": self._uow.tenant_id, "source_repo": source_repo, "limit": limit},
            )
        )
        return [session_of(row) for row in rows]

    async def get(self, session_id: UUID) -> Session | None:
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            *named(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant_id = :tenant_id AND id = :id",
                {"tenant_id": self._uow.tenant_id, "id": session_id},
            )
        )
        return session_of(row) if row else None

    async def add_draft(self, session_id: UUID, draft: dict[str, Any], keep: int) -> int | None:
        """Append to an active session's drafts, keeping its newest `keep`; how many it then
        holds, or None when the session is unknown or has ended."""
        conn = await self._uow.connection()
        sql = """
            UPDATE sessions s SET drafts = (
                SELECT coalesce(jsonb_agg(d.value ORDER BY d.n), '[]'::jsonb)
                FROM jsonb_array_elements(s.drafts || jsonb_build_array(:draft::jsonb))
                     WITH ORDINALITY AS d(value, n)
                WHERE d.n > jsonb_array_length(s.drafts) + 1 - :keep
            )
            WHERE s.tenant_id = :tenant_id AND s.id = :id AND s.status = 'active'
            RETURNING jsonb_array_length(s.drafts) AS held"""
        values = {"tenant_id": self._uow.tenant_id, "id": session_id, "draft": draft, "keep": keep}
        held = await conn.fetchval(*named(sql, values))
        return int(held) if held is not None else None

    async def add_sources(self, session_id: UUID, sources: Sequence[str], keep: int) -> int | None:
        """An active session read untrusted input from `sources`: added to its own (each
        once, its newest `keep`), exposed from now on if any; how many it then holds, or
        None when the session is unknown or has ended. (The time is bound: Citus takes no
        now() inside CASE or coalesce in an UPDATE.)"""
        conn = await self._uow.connection()
        sql = """
            UPDATE sessions s SET
              exposed_at = CASE WHEN cardinality(:sources::text[]) > 0
                                THEN coalesce(s.exposed_at, :now::timestamptz)
                                ELSE s.exposed_at END,
              sources = (
                SELECT coalesce(array_agg(k.source ORDER BY k.n), '{}')
                FROM (SELECT a.source, min(a.n) AS n
                      FROM unnest(s.sources || :sources::text[]) WITH ORDINALITY AS a(source, n)
                      GROUP BY a.source
                      ORDER BY min(a.n) DESC LIMIT :keep) k
            )
            WHERE s.tenant_id = :tenant_id AND s.id = :id AND s.status = 'active'
            RETURNING cardinality(s.sources) AS held"""
        values = {
            "tenant_id": self._uow.tenant_id, "id": session_id, "sources": list(sources),
            "keep": keep, "now": datetime.now(UTC),
        }  # fmt: skip
        held = await conn.fetchval(*named(sql, values))
        return int(held) if held is not None else None

    async def exposure(self, source_repo: str | None) -> Exposure | None:
        """The newest active session that read untrusted input and that a write to
        `source_repo` may come from: one of that repository, or, for a global write (no
        repository), any. A write does not say which session it belongs to (an MCP call
        is not a hook's), so every write that may be one of its own carries its sources."""
        conn = await self._uow.connection()
        sql = """
            SELECT s.id, s.sources FROM sessions s
            WHERE s.tenant_id = :tenant_id AND s.status = 'active' AND s.exposed_at IS NOT NULL
              AND (:source_repo::text IS NULL OR s.source_repo = :source_repo)
            ORDER BY s.exposed_at DESC LIMIT 1"""
        row = await conn.fetchrow(
            *named(sql, {"tenant_id": self._uow.tenant_id, "source_repo": source_repo})
        )
        return Exposure(row["id"], tuple(row["sources"])) if row else None

    async def drafts(self, session_id: UUID, for_update: bool = False) -> Held | None:
        """A session's drafts and the untrusted sources it read; None when unknown.
        `for_update`: the row locked until the transaction ends (the session ends next)."""
        conn = await self._uow.connection()
        lock = " FOR UPDATE" if for_update else ""
        sql = (
            f"SELECT drafts, sources FROM sessions WHERE tenant_id = :tenant_id AND id = :id{lock}"
        )
        found = await conn.fetchrow(
            *named(sql, {"tenant_id": self._uow.tenant_id, "id": session_id})
        )
        return (list(found["drafts"]), list(found["sources"])) if found else None

    async def end(
        self, session_id: UUID, status: str, summary: str | None, key_changes: list[dict[str, Any]]
    ) -> Session | None:
        """Ends an active session; None when it is unknown or already ended."""
        conn = await self._uow.connection()
        sql = f"""
            UPDATE sessions SET status = :status, summary = :summary,
                                key_changes = :key_changes, ended_at = now(),
                                drafts = '[]'::jsonb
            WHERE tenant_id = :tenant_id AND id = :id AND status = 'active'
            RETURNING {SESSION_COLUMNS}
            """
        values = {
            "tenant_id": self._uow.tenant_id,
            "id": session_id,
            "status": status,
            "summary": summary,
            "key_changes": key_changes,
        }
        row = await conn.fetchrow(*named(sql, values))
        return session_of(row) if row else None

    async def abandon_older_than(self, hours: float) -> list[tuple[Session, Held]]:
        """Close as abandoned the active sessions started more than `hours` ago (their
        agent never said how they ended): those closed, each with the drafts and untrusted
        sources it held (its drafts are cleared)."""
        conn = await self._uow.connection()
        values = {"tenant_id": self._uow.tenant_id, "seconds": hours * 3600}
        held = await conn.fetch(
            *named(
                "SELECT id, drafts, sources FROM sessions"
                " WHERE tenant_id = :tenant_id AND status = 'active'"
                " AND started_at < now() - make_interval(secs => :seconds) FOR UPDATE",
                values,
            )
        )
        if not held:
            return []
        kept = {r["id"]: (list(r["drafts"]), list(r["sources"])) for r in held}
        rows = await conn.fetch(
            *named(
                "UPDATE sessions SET status = 'abandoned', ended_at = now(), drafts = '[]'::jsonb"
                " WHERE tenant_id = :tenant_id AND id = ANY(:ids::uuid[])"
                f" RETURNING {SESSION_COLUMNS}",
                {"tenant_id": self._uow.tenant_id, "ids": list(kept)},
            )
        )
        return [(session_of(r), kept[r["id"]]) for r in rows]

    async def delete(self, session_id: UUID) -> bool:
        conn = await self._uow.connection()
        deleted = await conn.fetchval(
            *named(
                "DELETE FROM sessions WHERE tenant_id = :tenant_id AND id = :id RETURNING true",
                {"tenant_id": self._uow.tenant_id, "id": session_id},
            )
        )
        return bool(deleted)

    async def snapshot_rows(
        self, source_repo: str | None, recent_days: int, per_kind: int
    ) -> SnapshotRows:
        conn = await self._uow.connection()
        values = {
            "tenant_id": self._uow.tenant_id,
            "source_repo": source_repo,
            "recent_days": recent_days,
            "per_kind": per_kind,
        }
        row = await conn.fetchrow(*named(_SNAPSHOT, values))
        return SnapshotRows(
            sessions=row["sessions"],
            guardrails=row["guardrails"],
            recent=row["recent"],
            older={k: int(v) for k, v in row["older"].items()},
        )
