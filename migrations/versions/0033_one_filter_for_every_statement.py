"""one filter for every statement: the filter is one value of type memory_filter, and one
predicate, memory_matches(m, filter), says which memories it keeps (memory_is_live(m): what
an empty filter keeps). The index readers take the filter as their one argument in place of
seven, and read through the predicate instead of their own copies of it; the vector side's
bound on an exact read is one function, memory_vector_exact_bound(), for both back ends

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-27
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
APP_ROLE = "agent_memory_app"
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"

FILTER_TYPE = """
CREATE TYPE public.memory_filter AS (
    repo text, with_global boolean, types text[], tags text[], trust text[],
    min_relevance real, include_archived boolean, include_superseded boolean,
    include_quarantined boolean)
"""
# The vector reader's values, read by name in its statements: the filter, and the part of
# it that sizes the scope.
SEARCH_TYPE = """
CREATE TYPE public.memory_vector_search AS (
    query vector, max_rows integer, all_terms tsquery, tenant text,
    filters public.memory_filter, sized public.memory_filter, exact_bound bigint)
"""
# As migration 0025 made it, for the downgrade.
OLD_SEARCH_TYPE = """
CREATE TYPE public.memory_vector_search AS (
    query vector, max_rows integer, all_terms tsquery, tenant text, repo text,
    types text[], tags text[], trust text[], min_relevance real,
    include_archived boolean, with_global boolean, exact_bound bigint)
"""

KEYWORD = "public.memory_keyword_hits(tsquery, integer, public.memory_filter)"
VECTOR = "public.memory_vector_candidates(vector, integer, tsquery, text, public.memory_filter)"
OLD_KEYWORD = (
    "public.memory_keyword_hits(tsquery, integer, text, text[], text[], text[], real,"
    " boolean, boolean)"
)
OLD_VECTOR = (
    "public.memory_vector_candidates(vector, integer, tsquery, text, text, text[], text[],"
    " text[], real, boolean, boolean)"
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


def _grant(signature: str) -> None:
    op.execute(f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {signature} TO {APP_ROLE}")


def upgrade() -> None:
    begin_function_change()
    op.execute(FILTER_TYPE)
    op.execute(function_as_made("memory_matches"))
    op.execute(function_as_made("memory_is_live"))
    op.execute(f"DROP FUNCTION {OLD_KEYWORD}")
    op.execute(f"DROP FUNCTION {OLD_VECTOR}")
    op.execute("DROP TYPE public.memory_vector_search")
    op.execute(SEARCH_TYPE)
    op.execute(function_as_made("memory_vector_exact_bound"))
    op.execute(function_as_made("memory_keyword_hits"))
    op.execute(function_as_made("memory_vector_candidates"))
    _grant(KEYWORD)
    _grant(VECTOR)


def downgrade() -> None:
    begin_function_change()
    op.execute(f"DROP FUNCTION {KEYWORD}")
    op.execute(f"DROP FUNCTION {VECTOR}")
    op.execute("DROP TYPE public.memory_vector_search")
    op.execute(OLD_SEARCH_TYPE)
    op.execute(function_as_made("memory_keyword_hits", "0028"))
    op.execute(function_as_made("memory_vector_candidates", "0030"))
    _grant(OLD_KEYWORD)
    _grant(OLD_VECTOR)
    op.execute("DROP FUNCTION public.memory_vector_exact_bound(real)")
    op.execute("DROP FUNCTION public.memory_is_live(anyelement)")
    op.execute("DROP FUNCTION public.memory_matches(anyelement, public.memory_filter)")
    op.execute("DROP TYPE public.memory_filter")
