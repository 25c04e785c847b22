"""add memories.version for If-Match (optimistic concurrency on edits)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    # Bumped by every edit (reinforce, patch, supersede, restore, feedback), not by reads.
    op.execute("ALTER TABLE memories ADD COLUMN version integer NOT NULL DEFAULT 1")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("ALTER TABLE memories DROP COLUMN version")
