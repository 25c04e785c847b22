"""console sessions: a person signed in to the console through the team's identity
provider (OpenID Connect, app/services/oidc.py). The browser holds a random id; the row
holds its hash, the person, their tenant, the role they signed in with and when it ends, so
that a session survives a restart and is the same on every worker. Looked up by the hash
before the tenant is known, like api_keys: a reference table on Citus, no row policy (the
service's role reads it only by a hash). A removed person's rows stay until they expire,
worth nothing: the lookup requires the person present and holding an active key.

Revision ID: 0050
Revises: 0049
Create Date: 2026-12-07
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0050"
down_revision: str | None = "0049"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
APP_ROLE = "agent_memory_app"


def on_citus() -> bool:
    return bool(op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar())


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute(
        """
        CREATE TABLE console_sessions (
            id_hash    text        PRIMARY KEY,
            tenant_id  text        NOT NULL,
            person_id  uuid        NOT NULL,
            role       text        NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz NOT NULL,
            FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id)
        )
        """
    )
    op.execute(f"GRANT SELECT, INSERT, DELETE ON console_sessions TO {APP_ROLE}")
    if on_citus():
        op.execute("SELECT create_reference_table('console_sessions')")


def downgrade() -> None:
    op.execute("DROP TABLE console_sessions")
