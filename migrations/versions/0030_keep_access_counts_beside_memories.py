"""keep a memory's access counts beside it, in memory_access, not in its row: a search that
counts what it returned rewrote each returned memory's row, and a row that cannot be
rewritten on its own page puts its vector into the HNSW graph again, leaving a dead entry
behind; at a million memories those hid one query's neighbours until a vacuum with index
cleanup. memory_vector_candidates() no longer returns the counts (the search reads them)

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-26
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
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


APP_ROLE = "agent_memory_app"
VECTOR = (
    "public.memory_vector_candidates(vector, integer, tsquery, text, text, text[], text[],"
    " text[], real, boolean, boolean)"
)


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def upgrade() -> None:
    begin_function_change()
    op.execute(
        """
        CREATE TABLE memory_access (
            tenant_id        text        NOT NULL,
            memory_id        uuid        NOT NULL,
            access_count     integer     NOT NULL DEFAULT 0,
            last_accessed_at timestamptz,
            PRIMARY KEY (tenant_id, memory_id),
            FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id)
                ON DELETE CASCADE
        )
        """
    )
    # Rewritten in place on every count: room on each page for the next version.
    op.execute("ALTER TABLE memory_access SET (fillfactor = 70)")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON memory_access TO {APP_ROLE}")
    op.execute("ALTER TABLE memory_access ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE memory_access FORCE ROW LEVEL SECURITY")
    op.execute(
        """
        CREATE POLICY tenant_isolation ON memory_access
            USING (tenant_id = current_setting('app.tenant_id', true))
            WITH CHECK (tenant_id = current_setting('app.tenant_id', true))
        """
    )
    if on_citus(op.get_bind()):
        op.execute(
            "SELECT create_distributed_table('memory_access', 'tenant_id',"
            " colocate_with => 'memories')"
        )
    # Every tenant's counts: the owner reads past row-level security for this transaction.
    _copy(
        """
        INSERT INTO memory_access (tenant_id, memory_id, access_count, last_accessed_at)
        SELECT m.tenant_id, m.id, m.access_count, m.last_accessed_at FROM memories m
        WHERE m.access_count > 0 OR m.last_accessed_at IS NOT NULL
        """
    )
    # Statistics from the start: a search's plan is made from them.
    op.execute("ANALYZE memory_access")
    op.execute(f"DROP FUNCTION {VECTOR}")
    op.execute(function_as_made("memory_vector_candidates"))
    _grant_vector()
    op.execute("ALTER TABLE memories DROP COLUMN access_count, DROP COLUMN last_accessed_at")


def downgrade() -> None:
    begin_function_change()
    op.execute(
        "ALTER TABLE memories ADD COLUMN access_count integer NOT NULL DEFAULT 0,"
        " ADD COLUMN last_accessed_at timestamptz"
    )
    _copy(
        """
        UPDATE memories m SET access_count = a.access_count, last_accessed_at = a.last_accessed_at
        FROM memory_access a
        WHERE m.tenant_id = a.tenant_id AND m.id = a.memory_id
        """
    )
    op.execute(f"DROP FUNCTION {VECTOR}")
    op.execute(function_as_made("memory_vector_candidates", "0029"))
    _grant_vector()
    op.execute("DROP TABLE memory_access")


def _copy(statement: str) -> None:
    """`statement` over every tenant's rows: memories forces row-level security on its
    owner too, so the owner sets it aside for this transaction."""
    op.execute("ALTER TABLE memories NO FORCE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE memory_access NO FORCE ROW LEVEL SECURITY")
    op.execute(statement)
    op.execute("ALTER TABLE memories FORCE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE memory_access FORCE ROW LEVEL SECURITY")


def _grant_vector() -> None:
    op.execute(f"REVOKE ALL ON FUNCTION {VECTOR} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {VECTOR} TO {APP_ROLE}")
