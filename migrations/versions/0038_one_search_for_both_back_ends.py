"""one search for both back ends: the search statement is the same on one PostgreSQL and on
a Citus worker. Its two readers read the table the tenant's rows are in, which
memory_home() names (memories, or on a worker the tenant's shard): the keyword side through
memory_keyword_postings() on both (it classes the common terms, the one rule for them), the
vector side through memory_vector_candidates() on both (it chooses between an exact read and
the graph, and sizes the scope for that choice, the one rule for each). The single node's
per-term reader memory_keyword_hits() and memory_common_lexemes() go, with the one-argument
memory_tags_share(), which read memories by name. memory_vector_fits() reads embedding_model
(the coordinator's table) only when asked, which a worker's search is not

Revision ID: 0038
Revises: 0037
Create Date: 2026-11-29
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0038"
down_revision: str | None = "0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
APP_ROLE = "agent_memory_app"
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
HOME = "public.memory_home(text)"
HOME_ROWS = "public.memory_home_rows(regclass)"
TAGS_SHARE = "public.memory_tags_share(text[], regclass)"
OLD_TAGS_SHARE = "public.memory_tags_share(text[])"
# Dropped here (their folders' newest files), made again by a downgrade.
KEYWORD_HITS = "public.memory_keyword_hits(tsquery, integer, public.memory_filter)"
COMMON_LEXEMES = "public.memory_common_lexemes(text[])"


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


# CREATE OR REPLACE keeps a function's grants and its distribution (migration 0036).
def upgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_home"))
    _grant(HOME)
    op.execute(function_as_made("memory_home_rows"))
    _grant(HOME_ROWS)
    op.execute(function_as_made("memory_tags_share"))
    _grant(TAGS_SHARE)
    op.execute(function_as_made("memory_keyword_postings"))
    op.execute(function_as_made("memory_vector_candidates"))
    op.execute(function_as_made("memory_vector_fits"))
    op.execute(function_as_made("memory_keyword_hits"))  # each a DROP
    op.execute(function_as_made("memory_common_lexemes"))
    op.execute(f"DROP FUNCTION {OLD_TAGS_SHARE}")


def downgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_common_lexemes", "0008"))
    _grant(COMMON_LEXEMES)
    op.execute(function_as_made("memory_keyword_hits", "0033"))
    _grant(KEYWORD_HITS)
    op.execute(function_as_made("memory_tags_share", "0029"))
    _grant(OLD_TAGS_SHARE)
    op.execute(function_as_made("memory_vector_candidates", "0033"))
    op.execute(function_as_made("memory_keyword_postings", "0036"))
    op.execute(function_as_made("memory_vector_fits", "0019"))
    op.execute(f"DROP FUNCTION {TAGS_SHARE}")
    op.execute(f"DROP FUNCTION {HOME_ROWS}")
    op.execute(f"DROP FUNCTION {HOME}")
