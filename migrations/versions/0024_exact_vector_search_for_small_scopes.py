"""exact vector search for a small scope: memory_vector_candidates() counts the scope (up to
app.vector_exact_below rows) and reads it whole, sorted by exact distance, instead of
walking the HNSW graph for it

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-25
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute(function_as_made("memory_vector_candidates"))


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute(function_as_made("memory_vector_candidates", "0023"))
