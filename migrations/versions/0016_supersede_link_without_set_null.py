"""the supersede link: NO ACTION instead of ON DELETE SET NULL

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"
FK = "memories_tenant_id_superseded_by_fkey"


def upgrade() -> None:
    # Citus refuses SET NULL on a foreign key that includes the distribution column
    # (tenant_id); the delete statement clears the links itself instead, on every database.
    op.execute(LOCK_TIMEOUT)
    op.execute(f"ALTER TABLE memories DROP CONSTRAINT {FK}")
    op.execute(
        f"ALTER TABLE memories ADD CONSTRAINT {FK} FOREIGN KEY (tenant_id, superseded_by)"
        " REFERENCES memories (tenant_id, id) NOT VALID"
    )
    op.execute(f"ALTER TABLE memories VALIDATE CONSTRAINT {FK}")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(f"ALTER TABLE memories DROP CONSTRAINT {FK}")
    op.execute(
        f"ALTER TABLE memories ADD CONSTRAINT {FK} FOREIGN KEY (tenant_id, superseded_by)"
        " REFERENCES memories (tenant_id, id) ON DELETE SET NULL (superseded_by) NOT VALID"
    )
    op.execute(f"ALTER TABLE memories VALIDATE CONSTRAINT {FK}")
