"""keyword postings on the tenant's worker: memory_keyword_postings() reads every term of a
query for one tenant in one call, with owner rights, through the GIN index. On Citus it is
a distributed function co-located with memories by its tenant argument (Citus runs the call
on the worker that holds the tenant's shard), which the search calls as its own statement:
under row-level security the worker could not take `@@` to the index and read all of a
tenant's rows for each term (910 ms for a term no memory holds, at a million). A term that
the statistics of the tenant's shard call common is not read (a GIN scan reads its whole
posting list first: 75-250 ms a query at a million); its frequency there is answered
instead, as the single node's statement takes it from memory_common_lexemes(). For a
keyword-only search (`all_terms`) with no other term's hit, it reads the rows holding all
the terms, as the single node's statement does

Revision ID: 0035
Revises: 0034
Create Date: 2026-11-27
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0035"
down_revision: str | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
APP_ROLE = "agent_memory_app"
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
POSTINGS = "public.memory_keyword_postings(text, text, integer, public.memory_filter, boolean)"


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def on_citus() -> bool:
    return bool(op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar())


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    citus = on_citus()
    if citus:
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute(function_as_made("memory_keyword_postings"))
    op.execute(f"REVOKE ALL ON FUNCTION {POSTINGS} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {POSTINGS} TO {APP_ROLE}")
    if citus:
        # force_delegation: the call is delegated inside a transaction block too (every
        # search runs in one), as long as it reads only the tenant's co-located shards.
        op.execute(
            f"SELECT create_distributed_function('{POSTINGS}', 'tenant',"
            " colocate_with := 'memories', force_delegation := true)"
        )


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    if on_citus():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute(f"DROP FUNCTION {POSTINGS}")
