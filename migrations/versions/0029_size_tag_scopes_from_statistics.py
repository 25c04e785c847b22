"""memory_vector_candidates() sizes a scope narrowed by tags from ANALYZE's statistics
(memory_tags_share()) and reads a small one whole, by exact distance, through
memories_tags_key, where the planner walked the HNSW graph: at a million memories a tag on
1% of them took 75 ms that way

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-26
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


def on_citus(connection: Any) -> bool:
    """Whether the migration's connection is to a Citus coordinator."""
    return bool(connection.exec_driver_sql(CITUS_INSTALLED).scalar())


def begin_function_change() -> None:
    """First in a migration that replaces functions: a lock timeout, and on Citus one
    connection per node (it refuses a function command after a parallel operation on a
    distributed table in the same transaction)."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if on_citus(op.get_bind()):
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


APP_ROLE = "agent_memory_app"
TAGS_SHARE = "memory_tags_share(text[])"


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def upgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_tags_share"))
    # Owner rights: only the service's role may call it.
    op.execute(f"REVOKE ALL ON FUNCTION {TAGS_SHARE} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {TAGS_SHARE} TO {APP_ROLE}")
    # Its text then, which 0030 holds.
    op.execute(function_as_made("memory_vector_candidates"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_vector_candidates", "0025"))
    op.execute(f"DROP FUNCTION {TAGS_SHARE}")
