"""keep a session's drafts in its row: what the hooks saw the agent learn (a failure that a
change then fixed), screened, never a memory, shown at the session's stop for the agent to
keep with one `remember` or drop, and gone when the session ends

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Self-contained: a migration imports no app code, which may change after it shipped.
LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("ALTER TABLE sessions ADD COLUMN drafts jsonb NOT NULL DEFAULT '[]'::jsonb")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("ALTER TABLE sessions DROP COLUMN drafts")
