"""add the audit log: who changed what (edits, life cycle, prune, import, quarantine,
feedback, keys), with the values before and after, so that a change can be undone

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-25
"""

from collections.abc import Sequence
from typing import Any

from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


def on_citus(connection: Any) -> bool:
    """Whether the migration's connection is to a Citus coordinator."""
    return bool(connection.exec_driver_sql(CITUS_INSTALLED).scalar())


LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"
APP_ROLE = "agent_memory_app"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        """
        CREATE TABLE audit_log (
            tenant_id   text        NOT NULL,
            id          uuid        NOT NULL DEFAULT uuidv7(),
            at          timestamptz NOT NULL DEFAULT now(),
            actor_key   uuid,                 -- NULL: open mode, or the service itself
            actor_role  text        NOT NULL,
            action      text        NOT NULL,
            memory_ids  uuid[]      NOT NULL DEFAULT '{}',
            before      jsonb       NOT NULL DEFAULT '{}',  -- memory id -> fields before
            after       jsonb       NOT NULL DEFAULT '{}',  -- memory id -> fields after
            detail      jsonb       NOT NULL DEFAULT '{}',
            undone_by   uuid,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    # GET /audit pages newest first, and filters by memory.
    op.execute("CREATE INDEX audit_log_at_key ON audit_log (tenant_id, at DESC, id DESC)")
    op.execute("CREATE INDEX audit_log_memory_key ON audit_log USING gin (memory_ids)")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON audit_log TO {APP_ROLE}")
    op.execute("ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY")
    op.execute(
        """
        CREATE POLICY tenant_isolation ON audit_log
            USING (tenant_id = current_setting('app.tenant_id', true))
            WITH CHECK (tenant_id = current_setting('app.tenant_id', true))
        """
    )
    if on_citus(op.get_bind()):
        op.execute(
            "SELECT create_distributed_table('audit_log', 'tenant_id', colocate_with => 'memories')"
        )


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("DROP TABLE audit_log")
