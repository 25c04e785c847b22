"""the Citus search in one call: memory_search_on_worker() runs a search's statement on the
worker that holds the tenant's shard, with the query's keyword hits read there first. The
coordinator then plans one call, where it planned (and sent) the whole statement, about
half of a search's fixed cost on the cluster (docs/scale-out.md)

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
ON_WORKER = "public.memory_search_on_worker(text, text, integer, public.memory_filter, text)"


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
    op.execute(function_as_made("memory_search_on_worker"))
    op.execute(f"REVOKE ALL ON FUNCTION {ON_WORKER} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {ON_WORKER} TO {APP_ROLE}")
    if citus:
        # force_delegation: delegated inside a transaction block too (a search runs in
        # one), and every query it runs must filter by the tenant it was routed by.
        op.execute(
            f"SELECT create_distributed_function('{ON_WORKER}', 'tenant',"
            " colocate_with := 'memories', force_delegation := true)"
        )


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    if on_citus():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute(f"DROP FUNCTION {ON_WORKER}")
