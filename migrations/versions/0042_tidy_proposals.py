"""tidy proposals: what the service finds untidy in a tenant's memory, for a person to
accept or dismiss, never applied on its own: memories that say the same thing (merge), a
pair where one may say the opposite of the other (replace), a memory stale since its files
changed and unread since (retire). A dismissed proposal stays, so that it does not come
back while its memories stay as they were (`contents`, a digest of their versions).

Revision ID: 0042
Revises: 0041
Create Date: 2026-11-29
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0042"
down_revision: str | None = "0041"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
APP_ROLE = "agent_memory_app"


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute(
        """
        CREATE TABLE proposals (
            tenant_id   text        NOT NULL,
            id          uuid        NOT NULL DEFAULT gen_random_uuid(),
            kind        text        NOT NULL CHECK (kind IN ('merge', 'replace', 'retire')),
            -- The memory kept first (merge: the one the others join; replace: the newer),
            -- then those that go.
            memory_ids  uuid[]      NOT NULL,
            source_repo text,
            similarity  real,
            reason      text        NOT NULL,
            fingerprint text        NOT NULL,
            contents    text        NOT NULL,
            created_at  timestamptz NOT NULL DEFAULT now(),
            status      text        NOT NULL DEFAULT 'pending'
                                    CHECK (status IN ('pending', 'accepted', 'dismissed')),
            decided_at  timestamptz,
            audit_id    uuid,
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, fingerprint)
        )
        """
    )
    op.execute(
        "CREATE INDEX proposals_pending_key ON proposals (tenant_id, created_at DESC, id DESC)"
        " WHERE status = 'pending'"
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON proposals TO {APP_ROLE}")
    op.execute("ALTER TABLE proposals ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE proposals FORCE ROW LEVEL SECURITY")
    op.execute(
        """
        CREATE POLICY tenant_isolation ON proposals
            USING (tenant_id = current_setting('app.tenant_id', true))
            WITH CHECK (tenant_id = current_setting('app.tenant_id', true))
        """
    )
    if op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar():
        op.execute(
            "SELECT create_distributed_table('proposals', 'tenant_id', colocate_with => 'memories')"
        )


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute("DROP TABLE proposals")
