"""common terms on the tenant's worker: memory_keyword_postings() does not read a term that
the statistics of the table holding the tenant's rows (on a Citus worker, the shard) call
common, and answers its frequency there instead, as the single node's statement does with
memory_common_lexemes(); at a million memories on Citus, reading such terms' posting lists
took 75-250 ms a query (docs/scale-out.md). For a keyword-only search (`all_terms`) with
no other term's hit, it reads the rows holding all the terms, as the single node's
statement does

Revision ID: 0036
Revises: 0035
Create Date: 2026-11-27
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0036"
down_revision: str | None = "0035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
APP_ROLE = "agent_memory_app"
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
POSTINGS = "public.memory_keyword_postings(text, text, integer, public.memory_filter, boolean)"
POSTINGS_0035 = "public.memory_keyword_postings(text, text, integer, public.memory_filter)"


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def on_citus() -> bool:
    return bool(op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar())


def install(text: str, signature: str, citus: bool) -> None:
    """A function's text, for the service's role; on Citus, delegated by its tenant to the
    worker holding the tenant's shard (force_delegation: inside a transaction block too)."""
    op.execute(text)
    op.execute(f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {signature} TO {APP_ROLE}")
    if citus:
        op.execute(
            f"SELECT create_distributed_function('{signature}', 'tenant',"
            " colocate_with := 'memories', force_delegation := true)"
        )


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    citus = on_citus()
    if citus:
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute(f"DROP FUNCTION {POSTINGS_0035}")
    install(function_as_made("memory_keyword_postings"), POSTINGS, citus)


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    citus = on_citus()
    if citus:
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute(f"DROP FUNCTION {POSTINGS}")
    install(function_as_made("memory_keyword_postings", "0035"), POSTINGS_0035, citus)
