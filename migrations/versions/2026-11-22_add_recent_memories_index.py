"""index memories by (tenant_id, created_at, id): newest-first listing without a sort

GET /memories without a repository sorted every row of the tenant (10 ms at 10k rows,
linear beyond); with this index it reads the newest rows first (0.5 ms).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("CREATE INDEX memories_recent_key ON memories (tenant_id, created_at, id)")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("DROP INDEX memories_recent_key")
