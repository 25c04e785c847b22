"""bound what lower trust can change, and make the audit log append-only: a memory remembers
that an admin archived it by hand (an agent's re-store no longer brings it back); the app
role may insert and read audit entries, never update them, and delete only those past the
30-day floor of retention (a restrictive row policy; row security forced), and an undo is
found by the entry that records it (indexed) instead of a mark written into the entry it
undid

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-26
"""

from collections.abc import Sequence
from typing import Any

from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
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

# Retention may delete only what is past this floor, whatever AUDIT_RETENTION_DAYS says: a
# compromised app role cannot erase what it just did. (A SECURITY DEFINER function owned by
# the owner would keep DELETE from the app role altogether, but Citus runs a definer's
# statements on the shards as the caller, and could not route its tenant to one shard.)
RETENTION = """
CREATE POLICY retention_floor ON {table} AS RESTRICTIVE FOR DELETE TO agent_memory_app
    USING (at < now() - interval '30 days')
"""
FORCE = "ALTER TABLE {table} FORCE ROW LEVEL SECURITY"


def on_shards(statement: str) -> None:
    """On Citus, a statement each shard of audit_log runs too: a policy, or forcing row
    security, made after the table was distributed reaches only the coordinator's table
    (which new shards copy), not the shards that hold the rows."""
    command = statement.format(table="%s").replace("'", "''")
    op.execute(
        f"""DO $do$
            DECLARE refused text;
            BEGIN
                SELECT string_agg(shardid || ': ' || result, '; ') INTO refused
                  FROM run_command_on_shards('audit_log', '{command}')
                 WHERE NOT success;
                IF refused IS NOT NULL THEN
                    RAISE EXCEPTION 'shards refused: %', refused;
                END IF;
            END
            $do$"""
    )


def upgrade() -> None:
    begin_function_change()  # a lock timeout; on Citus one connection per node
    op.execute("ALTER TABLE memories ADD COLUMN archived_by_admin boolean NOT NULL DEFAULT false")
    citus = on_citus(op.get_bind())
    if citus:
        # Each shard first, over connections of its own, before this transaction holds
        # a lock on them; then the coordinator's table alone.
        on_shards(FORCE)
        on_shards(RETENTION)
        op.execute("SET LOCAL citus.enable_ddl_propagation TO off")
    op.execute(FORCE.format(table="audit_log"))
    op.execute(RETENTION.format(table="audit_log"))
    if citus:
        op.execute("SET LOCAL citus.enable_ddl_propagation TO on")
    op.execute(f"REVOKE UPDATE, TRUNCATE ON audit_log FROM {APP_ROLE}")
    op.execute(
        "CREATE INDEX audit_log_undo_key ON audit_log (tenant_id, ((detail->>'undid')))"
        " WHERE action = 'undo'"
    )


def downgrade() -> None:
    begin_function_change()
    citus = on_citus(op.get_bind())
    if citus:  # each shard first, as in the upgrade
        on_shards("DROP POLICY retention_floor ON {table}")
        on_shards("ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    op.execute("DROP INDEX audit_log_undo_key")
    if citus:
        op.execute("SET LOCAL citus.enable_ddl_propagation TO off")
    op.execute("DROP POLICY retention_floor ON audit_log")
    op.execute("ALTER TABLE audit_log NO FORCE ROW LEVEL SECURITY")
    if citus:
        op.execute("SET LOCAL citus.enable_ddl_propagation TO on")
    op.execute(f"GRANT UPDATE ON audit_log TO {APP_ROLE}")
    # What 0031 found by the undo's own entry is written back into the entries it undid.
    op.execute(
        """
        UPDATE audit_log a SET undone_by = u.id
        FROM audit_log u
        WHERE u.tenant_id = a.tenant_id AND u.action = 'undo'
          AND u.detail->>'undid' = a.id::text AND a.undone_by IS NULL
        """
    )
    op.execute("ALTER TABLE memories DROP COLUMN archived_by_admin")
