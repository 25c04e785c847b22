"""add idempotency_keys: a retried create answers its first response

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"
APP_ROLE = "agent_memory_app"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        """
        CREATE TABLE idempotency_keys (
            tenant_id     text        NOT NULL,
            key           text        NOT NULL,
            request_hash  text        NOT NULL,
            status        integer,
            response      bytea,
            created_at    timestamptz NOT NULL DEFAULT now(),
            completed_at  timestamptz,
            PRIMARY KEY (tenant_id, key)
        )
        """
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO {APP_ROLE}")
    op.execute("ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY")
    op.execute(
        """
        CREATE POLICY tenant_isolation ON idempotency_keys
            USING (tenant_id = current_setting('app.tenant_id', true))
            WITH CHECK (tenant_id = current_setting('app.tenant_id', true))
        """
    )


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("DROP TABLE idempotency_keys")
