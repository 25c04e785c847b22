"""the search planned once on the tenant's worker: on Citus, memory_search_on_worker()
takes the search statement to the worker that holds the tenant's shards (a distributed
function co-located with memories by its tenant argument), PREPAREs it there against the
shards once per connection and EXECUTEs it as a generic plan; before, the coordinator and
the worker each planned it for its values on every search (10 of its 17 ms at 10,000
memories). The statement reads the keyword hits itself, calling memory_keyword_postings()
on the worker, which now reads the tenant's shard by name: through the distributed table
its read was a distributed query nested in the search's, which Citus refuses whenever it
does not run it locally (under EXPLAIN ANALYZE, or auto_explain's log_analyze). One
PostgreSQL keeps its own plan per connection; there memory_keyword_postings() reads
memories, as before

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
SEARCH = "public.memory_search_on_worker(text, text, text[], boolean)"


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
    # Made on one PostgreSQL too, as every function is (the search there never calls it).
    op.execute(function_as_made("memory_search_on_worker"))
    op.execute(f"REVOKE ALL ON FUNCTION {SEARCH} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {SEARCH} TO {APP_ROLE}")
    if not citus:
        return
    # force_delegation: the call is delegated inside a transaction block too (every
    # search runs in one), as long as it reads only the tenant's co-located shards.
    op.execute(
        f"SELECT create_distributed_function('{SEARCH}', 'tenant',"
        " colocate_with := 'memories', force_delegation := true)"
    )


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    if on_citus():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    op.execute(f"DROP FUNCTION {SEARCH}")
    op.execute(function_as_made("memory_keyword_postings", "0035"))
