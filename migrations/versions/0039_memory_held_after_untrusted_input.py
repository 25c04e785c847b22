"""memory held after untrusted input: a memory carries where it came from (`provenance`)
and, when it waits for a person before it is handed over unasked, since when (`held_at`);
a session records the untrusted sources it read (`sources`, `exposed_at`); a filter for
what is handed over unasked leaves held memories out, but for the asking session's own
(memory_filter's include_held and held_session, read by memory_matches())

Revision ID: 0039
Revises: 0038
Create Date: 2026-11-29
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0039"
down_revision: str | None = "0038"
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
    # Both nullable, no default: adding them rewrites no row.
    op.execute("ALTER TABLE memories ADD COLUMN held_at timestamptz, ADD COLUMN provenance jsonb")
    # The console's review list, and a count for /stats: the few held rows of a tenant.
    op.execute(
        "CREATE INDEX memories_held_key ON memories (tenant_id, held_at) WHERE held_at IS NOT NULL"
    )
    op.execute(
        "ALTER TABLE sessions ADD COLUMN sources text[] NOT NULL DEFAULT '{}',"
        " ADD COLUMN exposed_at timestamptz"
    )
    # Every store asks for the tenant's open exposed session: the few such rows, not the
    # tenant's whole history of sessions.
    op.execute(
        "CREATE INDEX sessions_exposed_key ON sessions (tenant_id, exposed_at DESC)"
        " WHERE status = 'active' AND exposed_at IS NOT NULL"
    )
    # CASCADE: memory_vector_search holds the filter as two of its fields.
    op.execute(
        "ALTER TYPE public.memory_filter"
        " ADD ATTRIBUTE include_held boolean, ADD ATTRIBUTE held_session uuid CASCADE"
    )
    op.execute(function_as_made("memory_matches"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_matches", "0034"))
    op.execute(
        "ALTER TYPE public.memory_filter"
        " DROP ATTRIBUTE include_held, DROP ATTRIBUTE held_session CASCADE"
    )
    op.execute("DROP INDEX sessions_exposed_key")
    op.execute("ALTER TABLE sessions DROP COLUMN sources, DROP COLUMN exposed_at")
    op.execute("DROP INDEX memories_held_key")
    op.execute("ALTER TABLE memories DROP COLUMN held_at, DROP COLUMN provenance")
