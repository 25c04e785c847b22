"""a large repository has an HNSW graph of its own: memory_vector_candidates() walks a
repository's own graph when it has one (a partial HNSW index WHERE tenant_id = ... AND
source_repo = ..., built by `agent-memory graphs` or the service's schedule as the owner),
where it read a scope of up to its exact bound whole: 30-45 ms for a 1% repository of a
million memories, against 5 ms for its own graph. memory_repository_graph_name() names
such a graph, memory_repository_graph() says whether one is ready

Revision ID: 0043
Revises: 0042
Create Date: 2026-11-29
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0043"
down_revision: str | None = "0042"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
GRAPH_NAME = "public.memory_repository_graph_name(text, text)"
GRAPH = "public.memory_repository_graph(text, text, regclass)"
# The graphs `agent-memory graphs` built (their names, memory_repository_graph_name()).
BUILT_GRAPHS = (
    "SELECT c.relname FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
    " WHERE i.indrelid = 'public.memories'::regclass AND c.relname LIKE 'memories\\_graph\\_%'"
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


def upgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_repository_graph_name"))
    op.execute(function_as_made("memory_repository_graph"))
    for signature in (GRAPH_NAME, GRAPH):
        op.execute(f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC")
        op.execute(f"GRANT EXECUTE ON FUNCTION {signature} TO agent_memory_app")
    op.execute(function_as_made("memory_vector_candidates"))


def downgrade() -> None:
    graphs = [row[0] for row in op.get_bind().exec_driver_sql(BUILT_GRAPHS)]
    with op.get_context().autocommit_block():
        for name in graphs:
            op.execute(f'DROP INDEX CONCURRENTLY IF EXISTS public."{name}"')
    begin_function_change()
    op.execute(function_as_made("memory_vector_candidates", "0040"))
    op.execute(f"DROP FUNCTION {GRAPH}")
    op.execute(f"DROP FUNCTION {GRAPH_NAME}")
