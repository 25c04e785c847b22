"""index the live memories' vectors by tenant and repository, so that a search in a scope
small beside the graph reads its vectors from one range of an index (memories_vector_scope_key)
after counting them in another (memories_scope_count_key); memory_vector_candidates()
bounds that exact read by the square root of app.vector_exact_factor times the rows in the
graph. And the live memories' tags (memories_tags_key), through which the planner reads a
rare tag's rows instead of walking the graph for them

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-25
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
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


# The search's values as one record, which the function's statements read by name.
SEARCH_TYPE = """
CREATE TYPE public.memory_vector_search AS (
    query vector, max_rows integer, all_terms tsquery, tenant text, repo text,
    types text[], tags text[], trust text[], min_relevance real,
    include_archived boolean, with_global boolean, exact_bound bigint)
"""


# Built without blocking writes (a million rows take about 20 s). An interrupted build
# leaves an invalid index behind: dropped and made again.
INDEXES = {
    # The vector and every column a search filters on, so that the exact read is an
    # index-only scan of one contiguous range (a vector read from the row costs a TOAST
    # lookup: five buffers). Re-embedding builds its twin on the new column
    # (app/repository/reembed.py).
    "memories_vector_scope_key": "ON memories (tenant_id, source_repo)"
    " INCLUDE (id, memory_type, trust_level, relevance_score, tags, embedding)"
    " WHERE superseded_by IS NULL AND archived_at IS NULL",
    # The scope's size, read without the heap or the vectors.
    "memories_scope_count_key": "ON memories (tenant_id, source_repo)"
    " WHERE superseded_by IS NULL AND archived_at IS NULL",
    # A tag's live rows: for a rare tag the planner reads them, sorted by exact distance,
    # rather than walk the graph until enough of them pass.
    "memories_tags_key": "ON memories USING gin (tenant_id, tags) WITH (fastupdate = off)"
    " WHERE superseded_by IS NULL AND archived_at IS NULL",
}


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def upgrade() -> None:
    begin_function_change()
    op.execute(SEARCH_TYPE)
    # Right with or without the indexes; faster with them. (Its text then, which 0029 holds.)
    op.execute(function_as_made("memory_vector_candidates"))
    with op.get_context().autocommit_block():
        for name, definition in INDEXES.items():
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            op.execute(f"CREATE INDEX CONCURRENTLY {name} {definition}")


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_vector_candidates", "0024"))
    op.execute("DROP TYPE public.memory_vector_search")
    op.execute("DROP INDEX memories_tags_key")
    op.execute("DROP INDEX memories_scope_count_key")
    op.execute("DROP INDEX memories_vector_scope_key")
