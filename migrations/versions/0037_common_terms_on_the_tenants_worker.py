"""common terms on the tenant's worker: memory_keyword_postings() does not read a term that
the statistics of the table holding the tenant's rows (on a Citus worker, the shard) call
common, and answers its frequency there instead, as the single node's statement does with
memory_common_lexemes(); at a million memories on Citus, reading such terms' posting lists
took 75-250 ms a query (docs/scale-out.md). For a keyword-only search with no other term's
hit, it reads the rows holding all the terms, as the single node's statement does

Revision ID: 0037
Revises: 0036
Create Date: 2026-11-27
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0037"
down_revision: str | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP_ROLE = "agent_memory_app"
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
FILTER = "public.memory_filter"
POSTINGS = f"public.memory_keyword_postings(text, text, integer, {FILTER}, boolean)"
ON_WORKER = f"public.memory_search_on_worker(text, text, integer, {FILTER}, boolean, text)"
# As 0035 and 0036 made them.
POSTINGS_0035 = f"public.memory_keyword_postings(text, text, integer, {FILTER})"
ON_WORKER_0036 = f"public.memory_search_on_worker(text, text, integer, {FILTER}, text)"


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def on_citus() -> bool:
    return bool(op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar())


def install(text: str, signature: str, citus: bool) -> None:
    """A function's text, for the service's role; on Citus, delegated by its tenant to the
    worker holding the tenant's shard."""
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
    op.execute(f"DROP FUNCTION {ON_WORKER_0036}")
    op.execute(f"DROP FUNCTION {POSTINGS_0035}")
    install(function_as_made("memory_keyword_postings"), POSTINGS, citus=citus)
    install(function_as_made("memory_search_on_worker"), ON_WORKER, citus=citus)


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    citus = on_citus()
    if citus:
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute(f"DROP FUNCTION {ON_WORKER}")
    op.execute(f"DROP FUNCTION {POSTINGS}")
    postings = function_as_made("memory_keyword_postings", "0035")
    install(postings, POSTINGS_0035, citus=citus)
    on_worker = function_as_made("memory_search_on_worker", "0036")
    install(on_worker, ON_WORKER_0036, citus=citus)
