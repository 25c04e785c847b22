"""filter by person: a filter's person keeps the memories that person's keys wrote
(memories.person_id, migration 0045), in every statement that reads memories through
memory_matches(): the console's "who wrote what", and the API's person_id

Revision ID: 0048
Revises: 0047
Create Date: 2026-12-07
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0048"
down_revision: str | None = "0047"
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
    op.execute("ALTER TYPE public.memory_filter ADD ATTRIBUTE person uuid CASCADE")
    op.execute(function_as_made("memory_matches"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_matches", "0039"))
    op.execute("ALTER TYPE public.memory_filter DROP ATTRIBUTE person CASCADE")
