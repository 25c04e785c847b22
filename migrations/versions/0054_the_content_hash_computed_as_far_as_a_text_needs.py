"""the content hash computed only as far as a text needs: the same digest as migration
0001's, with a text already in NFC not normalised again and one with no whitespace to fold
not folded (30 us a text to 6; a search checks 20 rows' integrity)

Revision ID: 0054
Revises: 0053
Create Date: 2026-12-08
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0054"
down_revision: str | None = "0053"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

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
    # CREATE OR REPLACE may change a function's language: its grants stay.
    op.execute(function_as_made("memory_content_hash"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_content_hash", "0001"))
