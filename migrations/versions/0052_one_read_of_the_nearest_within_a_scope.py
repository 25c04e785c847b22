"""one read of the nearest within a scope: memory_nearest() holds the choice between an
exact read and the HNSW graph (the scope's size, counted up to its bound; a repository's
own graph), for one query vector or several in one statement. The search's vector side
(memory_vector_candidates(), now a sql function over it), the write path's near-duplicate
check and tidy's neighbours all read through it, where the near-duplicate check and tidy
wrote their own reads (the check never walked a repository's own graph)

Revision ID: 0052
Revises: 0051
Create Date: 2026-12-08
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0052"
down_revision: str | None = "0051"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
NEAREST = (
    "public.memory_nearest(vector[], integer, text, public.memory_filter, boolean, real, tsquery)"
)


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
    # The query vectors of a read of several (CASCADE: nothing stores the type).
    op.execute("ALTER TYPE public.memory_vector_search ADD ATTRIBUTE queries vector[] CASCADE")
    op.execute(function_as_made("memory_nearest"))
    op.execute(f"REVOKE ALL ON FUNCTION {NEAREST} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {NEAREST} TO agent_memory_app")
    op.execute(function_as_made("memory_vector_candidates"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_vector_candidates", "0043"))
    op.execute(f"DROP FUNCTION {NEAREST}")
    op.execute("ALTER TYPE public.memory_vector_search DROP ATTRIBUTE queries CASCADE")
