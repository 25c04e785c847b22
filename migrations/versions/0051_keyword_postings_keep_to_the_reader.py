"""keyword postings keep to the reader: memory_keyword_postings() (owner rights, so row
security does not hold inside it) reads another person's personal rows no more, as the row
policy of migration 0045 would not: their hits counted in the reader's document
frequencies, so a teammate's scores moved with the words of someone's personal memories
(a term's presence there could be told from a score)

Revision ID: 0051
Revises: 0050
Create Date: 2026-12-07
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0051"
down_revision: str | None = "0050"
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
    connection per node."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


def upgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_keyword_postings"))


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_keyword_postings", "0038"))
