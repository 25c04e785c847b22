"""add api_keys (hashed, per tenant, with a role) and memory provenance

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        """
        CREATE TABLE api_keys (
            tenant_id  text        NOT NULL,
            id         uuid        NOT NULL DEFAULT uuidv7(),
            name       text        NOT NULL,
            role       text        NOT NULL CHECK (role IN ('agent', 'reader', 'admin')),
            key_hash   text        NOT NULL,
            prefix     text        NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            revoked_at timestamptz,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    # The one key not led by tenant_id: a request's key is looked up before its tenant is known.
    op.execute("CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash)")
    # Which key wrote a memory (NULL: written with no keys configured, or before keys existed).
    op.execute("ALTER TABLE memories ADD COLUMN created_by_key uuid")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("ALTER TABLE memories DROP COLUMN created_by_key")
    op.execute("DROP TABLE api_keys")
