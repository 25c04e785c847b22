"""a queue of drafts for people: what `agent-memory import-history` found in past agent
sessions (a failure a change fixed, a user's standing instruction) and what a session still
held when it ended, kept as drafts a person keeps (as a memory), edits or drops; never
searched, never handed to an agent. A decided draft stays as a tombstone, so that a second
import of the same history brings nothing back (`fingerprint`).

Revision ID: 0041
Revises: 0040
Create Date: 2026-11-29
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0041"
down_revision: str | None = "0040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
APP_ROLE = "agent_memory_app"


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute(
        """
        CREATE TABLE drafts (
            tenant_id      text        NOT NULL,
            id             uuid        NOT NULL DEFAULT gen_random_uuid(),
            kind           text        NOT NULL CHECK (kind IN ('fix', 'instruction')),
            text           text        NOT NULL,
            files          text[]      NOT NULL DEFAULT '{}',
            source_repo    text        NOT NULL,
            client         text        NOT NULL,
            client_session text        NOT NULL,
            seen_at        timestamptz NOT NULL,
            sources        text[]      NOT NULL DEFAULT '{}',
            fingerprint    text        NOT NULL,
            queued_at      timestamptz NOT NULL DEFAULT now(),
            status         text        NOT NULL DEFAULT 'pending'
                                       CHECK (status IN ('pending', 'kept', 'dropped')),
            decided_at     timestamptz,
            memory_id      uuid,
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, fingerprint)
        )
        """
    )
    # The queue as a person reads it: a tenant's pending drafts, newest first.
    op.execute(
        "CREATE INDEX drafts_pending_key ON drafts (tenant_id, seen_at DESC, id DESC)"
        " WHERE status = 'pending'"
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON drafts TO {APP_ROLE}")
    op.execute("ALTER TABLE drafts ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE drafts FORCE ROW LEVEL SECURITY")
    op.execute(
        """
        CREATE POLICY tenant_isolation ON drafts
            USING (tenant_id = current_setting('app.tenant_id', true))
            WITH CHECK (tenant_id = current_setting('app.tenant_id', true))
        """
    )
    if op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar():
        op.execute(
            "SELECT create_distributed_table('drafts', 'tenant_id', colocate_with => 'memories')"
        )


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute("DROP TABLE drafts")
