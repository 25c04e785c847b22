"""filter by time: a filter's since and until keep the memories stored in [since, until)
(created_at), in every statement that reads memories through memory_matches()

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-27
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0034"
down_revision: str | None = "0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def begin_function_change() -> None:
    """First in a migration that replaces functions: a lock timeout, and on Citus one
    connection per node (it refuses a function command after a parallel operation on a
    distributed table in the same transaction)."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


def upgrade() -> None:
    begin_function_change()
    # CASCADE: memory_vector_search holds the filter as two of its fields.
    op.execute(
        "ALTER TYPE public.memory_filter"
        " ADD ATTRIBUTE since timestamptz, ADD ATTRIBUTE until timestamptz CASCADE"
    )
    op.execute(function_as_made("memory_matches"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_matches", "0033"))
    op.execute("ALTER TYPE public.memory_filter DROP ATTRIBUTE since, DROP ATTRIBUTE until CASCADE")
