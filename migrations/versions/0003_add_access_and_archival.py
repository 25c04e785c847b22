"""add access counting and archival columns

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        """
        ALTER TABLE memories
            ADD COLUMN access_count     integer NOT NULL DEFAULT 0,
            ADD COLUMN last_accessed_at timestamptz,
            ADD COLUMN archived_at      timestamptz
        """
    )
    # access_count and last_accessed_at change on every search hit and are deliberately
    # left out of every index: an indexed column would make each hit a non-HOT update
    # that inserts into the HNSW and GIN indexes. Prune and stats read these indexes.
    op.execute(
        "CREATE INDEX memories_archived_key ON memories (tenant_id, archived_at)"
        " WHERE archived_at IS NOT NULL"
    )
    op.execute(
        "CREATE INDEX memories_prune_key ON memories (tenant_id, created_at)"
        " WHERE archived_at IS NULL AND superseded_by IS NULL AND NOT pinned"
    )


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        """
        ALTER TABLE memories
            DROP COLUMN archived_at,
            DROP COLUMN last_accessed_at,
            DROP COLUMN access_count
        """
    )
