"""a search never reads a moved shard: memory_search_on_worker() refuses, as a
serialization failure to retry, a call that reaches a worker which no longer holds the
tenant's shard. The coordinator picks the worker when it plans the call; a move that
commits between that and the call's run (agent-memory isolate-tenant --to) left it reading
the shard's old copy, kept on the old worker until Citus drops it, and counting its reads
there, where they were lost with the copy

Revision ID: 0037
Revises: 0036
Create Date: 2026-11-27
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0037"
down_revision: str | None = "0036"
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


# CREATE OR REPLACE keeps the function's grants and its distribution (migration 0036).
def upgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_search_on_worker"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_search_on_worker", "0036"))
