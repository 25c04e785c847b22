"""record which model made the stored vectors

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP_ROLE = "agent_memory_app"


def upgrade() -> None:
    # Vectors of two models share a dimension but not a space: a server configured for
    # another model than the one recorded here refuses to start (app/main.py).
    op.execute(
        """
        CREATE TABLE embedding_model (
            singleton   boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
            name        text        NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(f"GRANT SELECT, INSERT ON embedding_model TO {APP_ROLE}")


def downgrade() -> None:
    op.execute("DROP TABLE embedding_model")
