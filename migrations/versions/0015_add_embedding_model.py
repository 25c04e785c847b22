"""record which model made the stored vectors

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-23
"""

import os
from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP_ROLE = "agent_memory_app"
LEGACY_LOCAL_MODEL = "local:all-MiniLM-L6-v2"


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
    # A database with vectors from before this record: until now the local provider had
    # one model. Other providers' databases are recorded by the server's first start.
    if os.environ.get("EMBEDDING_PROVIDER", "local") == "local":
        op.execute(
            f"INSERT INTO embedding_model (name) SELECT '{LEGACY_LOCAL_MODEL}'"
            " WHERE EXISTS (SELECT 1 FROM memories WHERE embedding IS NOT NULL)"
        )


def downgrade() -> None:
    op.execute("DROP TABLE embedding_model")
