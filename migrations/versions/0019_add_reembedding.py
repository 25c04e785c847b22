"""re-embedding under way: its target model, and the guard that keeps each vector in its space

A re-embed (`agent-memory reembed`, app/services/reembed.py) fills a second column with
the target model's vectors while the service keeps serving from the first, then swaps the
two in one short transaction and records the new model. A server still running the old
model after the swap must neither store its vectors nor compare its query vector with the
new ones: memory_vector_fits() says whether a model is the recorded one, and the upsert,
the embedding backfill and the search's vector side ask it (NULL, or no record yet: yes).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-23
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


def on_citus(connection: Any) -> bool:
    """Whether the migration's connection is to a Citus coordinator."""
    return bool(connection.exec_driver_sql(CITUS_INSTALLED).scalar())


APP_ROLE = "agent_memory_app"


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE reembedding (
            singleton    boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
            target_model text        NOT NULL,
            dimensions   integer     NOT NULL CHECK (dimensions BETWEEN 1 AND 16000),
            started_at   timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(f"GRANT SELECT ON reembedding TO {APP_ROLE}")
    op.execute(function_as_made("memory_vector_fits"))
    op.execute(function_as_made("memory_vector_if_fits"))


def downgrade() -> None:
    op.execute("DROP FUNCTION memory_vector_if_fits(vector, text)")
    op.execute("DROP FUNCTION memory_vector_fits(text)")
    op.execute("DROP TABLE reembedding")
    # A re-embed under way is abandoned with its table. On Citus a DDL run on the shards in
    # parallel would forbid the function commands of the downgrades that follow in this
    # transaction: one connection per worker instead.
    if on_citus(op.get_bind()):
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute("ALTER TABLE memories DROP COLUMN IF EXISTS embedding_next")
