"""a repository's nearest planned once per connection: on one PostgreSQL, memory_nearest()'s
count of a repository's scope and its exact read for one vector are static statements,
whose plan the caller's connection keeps, where EXECUTE planned them on every call (2-5 ms
of a repository's search and of a store's near-duplicate read); memory_entry_matches(),
what a scope index's entry holds of memory_matches(), which memory_matches() now calls

Revision ID: 0053
Revises: 0052
Create Date: 2026-12-08
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0053"
down_revision: str | None = "0052"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
ENTRY_MATCHES = "public.memory_entry_matches(anyelement, public.memory_filter)"


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
    op.execute(function_as_made("memory_entry_matches"))
    op.execute(f"REVOKE ALL ON FUNCTION {ENTRY_MATCHES} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {ENTRY_MATCHES} TO agent_memory_app")
    op.execute(function_as_made("memory_matches"))
    op.execute(function_as_made("memory_nearest"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_nearest", "0052"))
    op.execute(function_as_made("memory_matches", "0048"))
    op.execute(f"DROP FUNCTION {ENTRY_MATCHES}")
