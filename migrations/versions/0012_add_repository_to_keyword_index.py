"""add source_repo to the keyword (GIN) index, and let repository-scoped keyword hits use it

Most searches are scoped to one repository. With the repository inside the GIN index, a
scoped keyword lookup intersects the repository's posting list with the terms' instead of
reading every row of the tenant that holds the terms (measured at 100k rows, 1% in the
repository, three common terms: 7.1 -> 1.4 ms).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-22
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        "CREATE INDEX memories_keyword_key ON memories"
        " USING gin (tenant_id, source_repo, search_vector) WITH (fastupdate = off)"
    )
    op.execute("DROP INDEX memories_search_vector_key")
    op.execute(function_as_made("memory_keyword_hits"))


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(function_as_made("memory_keyword_hits", "0008"))
    op.execute(
        "CREATE INDEX memories_search_vector_key ON memories"
        " USING gin (tenant_id, search_vector) WITH (fastupdate = off)"
    )
    op.execute("DROP INDEX memories_keyword_key")
