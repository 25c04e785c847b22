"""create memories

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import os
from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"

# The vector dimension is fixed at creation; the app refuses to start with another.
EMBEDDING_DIM = int(os.environ.get("EMBEDDING_DIM", "384"))


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    # The hash is computed by the database itself, so writers and the read-time
    # integrity check can never disagree on what "normalised" means.
    op.execute(function_as_made("memory_content_hash"))
    op.execute(
        f"""
        CREATE TABLE memories (
            tenant_id         text        NOT NULL DEFAULT 'default',
            id                uuid        NOT NULL DEFAULT uuidv7(),
            content           text        NOT NULL CHECK (btrim(content) <> ''),
            content_hash      text        NOT NULL,
            memory_type       text        NOT NULL DEFAULT 'general'
                                          CHECK (memory_type ~ '^[a-z][a-z0-9_]{{0,39}}$'),
            category          text,
            tags              text[]      NOT NULL DEFAULT '{{}}',
            source_repo       text,
            task_id           text,
            trust_level       text        NOT NULL DEFAULT 'agent'
                                          CHECK (trust_level IN ('user', 'agent', 'system')),
            confidence        text        NOT NULL DEFAULT 'medium'
                                          CHECK (confidence IN ('high', 'medium', 'low')),
            pinned            boolean     NOT NULL DEFAULT false,
            source            text        NOT NULL DEFAULT 'api',
            name              text,
            metadata          jsonb       NOT NULL DEFAULT '{{}}',
            embedding         vector({EMBEDDING_DIM}),
            observation_count integer     NOT NULL DEFAULT 1,
            relevance_score   real        NOT NULL DEFAULT 1.0,
            superseded_by     uuid,
            created_at        timestamptz NOT NULL DEFAULT now(),
            updated_at        timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tenant_id, id),
            FOREIGN KEY (tenant_id, superseded_by) REFERENCES memories (tenant_id, id)
                ON DELETE SET NULL (superseded_by)
        ) WITH (fillfactor = 85)
        """
    )
    # fillfactor 85: access tracking rewrites rows on every search hit; free space
    # on the page keeps those updates HOT (no new index entries, HNSW included).
    op.execute(
        """
        CREATE UNIQUE INDEX memories_dedup_key
            ON memories (tenant_id, source_repo, content_hash) NULLS NOT DISTINCT
        """
    )
    op.execute(
        "CREATE INDEX memories_list_key ON memories (tenant_id, source_repo, created_at, id)"
    )
    op.execute("CREATE INDEX memories_type_key ON memories (tenant_id, memory_type)")
    op.execute(
        "CREATE INDEX memories_superseded_by_key ON memories (tenant_id, superseded_by)"
        " WHERE superseded_by IS NOT NULL"
    )


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("DROP TABLE memories")
    op.execute("DROP FUNCTION memory_content_hash(text)")
