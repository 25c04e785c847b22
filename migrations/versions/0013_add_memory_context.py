"""add memories.context: the situation a memory came from, searchable but not its identity

A memory is often unfindable by its own words: "Yes, it was the blue one" answers a
question only the turn before it holds; a learning's words rarely repeat the task it was
learned in. `context` carries that situation. The keyword side indexes it at weight D (with the
words inside camelCase identifiers; the search weighs D at a fifth of the content), and
the embedding reads it after the content, so the memory is found through it while a
memory whose own words match still ranks first.
Dedup and the content hash stay on the content alone: the same memory seen in another
context is reinforced, not stored twice. The context has its own hash, which the
read-time integrity check verifies with the content's.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-22
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def _retrigger(columns: str) -> list[str]:
    return [
        "DROP TRIGGER memories_search_vector_sync ON memories",
        f"""
        CREATE TRIGGER memories_search_vector_sync
            BEFORE INSERT OR UPDATE OF {columns} ON memories
            FOR EACH ROW EXECUTE FUNCTION memories_search_vector_trigger()
        """,
    ]


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("ALTER TABLE memories ADD COLUMN context text, ADD COLUMN context_hash text")
    op.execute(function_as_made("memories_search_vector"))
    op.execute(function_as_made("memories_search_vector_trigger"))
    for statement in _retrigger("content, category, tags, context"):
        op.execute(statement)
    # No rewrite: every existing row has no context, so its search_vector is unchanged.


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    # As migration 0002 made it.
    op.execute(
        """
        CREATE OR REPLACE FUNCTION memories_search_vector_trigger() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            NEW.search_vector := memories_search_vector(NEW.content, NEW.category, NEW.tags);
            RETURN NEW;
        END
        $$
        """
    )
    for statement in _retrigger("content, category, tags"):
        op.execute(statement)
    op.execute("DROP FUNCTION memories_search_vector(text, text, text[], text)")
    op.execute("ALTER TABLE memories DROP COLUMN context, DROP COLUMN context_hash")
