"""add what a memory knows of its code: the branch and commit it was written at, the files
it is about, and when one of those files changed since (possibly stale)

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-25
"""

from collections.abc import Sequence
from typing import Any

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
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


def upgrade() -> None:
    begin_function_change()
    # No rewrite: every new column is NULL or a constant default.
    op.execute(
        """
        ALTER TABLE memories
            ADD COLUMN git_branch text,
            ADD COLUMN git_commit text,
            ADD COLUMN files text[] NOT NULL DEFAULT '{}',
            ADD COLUMN stale_since timestamptz,
            ADD COLUMN stale_reason jsonb
        """
    )
    # The commit each session started at: the next one's changes are counted from it.
    op.execute("ALTER TABLE sessions ADD COLUMN git_branch text, ADD COLUMN git_commit text")
    # A run in which the agent did nothing ends abandoned (and no snapshot shows it).
    # (Two statements: Citus takes no ADD CONSTRAINT beside another subcommand.)
    op.execute("ALTER TABLE sessions DROP CONSTRAINT sessions_status_check")
    op.execute(
        "ALTER TABLE sessions ADD CONSTRAINT sessions_status_check"
        " CHECK (status IN ('active', 'completed', 'failed', 'abandoned'))"
    )
    # A session start marks the memories linked to the files changed since the last one.
    op.execute(
        "CREATE INDEX memories_files_key ON memories USING gin (files)"
        " WHERE files <> '{}' AND stale_since IS NULL"
    )


def downgrade() -> None:
    begin_function_change()
    op.execute("DROP INDEX memories_files_key")
    op.execute("UPDATE sessions SET status = 'failed' WHERE status = 'abandoned'")
    op.execute("ALTER TABLE sessions DROP CONSTRAINT sessions_status_check")
    op.execute(
        "ALTER TABLE sessions ADD CONSTRAINT sessions_status_check"
        " CHECK (status IN ('active', 'completed', 'failed'))"
    )
    op.execute("ALTER TABLE sessions DROP COLUMN git_branch, DROP COLUMN git_commit")
    op.execute(
        "ALTER TABLE memories DROP COLUMN git_branch, DROP COLUMN git_commit,"
        " DROP COLUMN files, DROP COLUMN stale_since, DROP COLUMN stale_reason"
    )
