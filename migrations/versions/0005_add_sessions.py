"""add sessions: what an agent worked on, and how it ended

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        """
        CREATE TABLE sessions (
            tenant_id   text        NOT NULL DEFAULT 'default',
            id          uuid        NOT NULL DEFAULT uuidv7(),
            source_repo text,
            agent       text,
            task        text,
            status      text        NOT NULL DEFAULT 'active'
                                    CHECK (status IN ('active', 'completed', 'failed')),
            summary     text,
            key_changes jsonb       NOT NULL DEFAULT '[]',
            started_at  timestamptz NOT NULL DEFAULT now(),
            ended_at    timestamptz,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    # The snapshot reads a repo's most recent completed sessions.
    op.execute(
        "CREATE INDEX sessions_completed_key ON sessions (tenant_id, source_repo, ended_at DESC)"
        " WHERE status = 'completed'"
    )


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("DROP TABLE sessions")
