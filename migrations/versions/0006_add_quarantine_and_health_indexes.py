"""add quarantine marking and the indexes /stats counts health from

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    # Set when a read finds content that no longer matches content_hash.
    op.execute("ALTER TABLE memories ADD COLUMN quarantined_at timestamptz")
    op.execute(
        "CREATE INDEX memories_quarantined_key ON memories (tenant_id, quarantined_at)"
        " WHERE quarantined_at IS NOT NULL"
    )
    # Rows the search cannot fully see: a health signal that should stay empty.
    op.execute(
        "CREATE INDEX memories_incomplete_key ON memories (tenant_id, id)"
        " WHERE embedding IS NULL OR search_vector IS NULL"
    )


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("DROP INDEX memories_incomplete_key")
    op.execute("ALTER TABLE memories DROP COLUMN quarantined_at")
