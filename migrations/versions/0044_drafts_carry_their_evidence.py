"""drafts carry their evidence: what the session showed (the error a fix met, the command
that failed, what changed, the command that passes now; what the user said; what showed a
convention), for a person to judge a draft at a glance; a client's own key for the same
lesson across sessions (the fingerprint is then of the key); and a third kind, a convention
(how the project is built, tested, run or deployed)

Revision ID: 0044
Revises: 0043
Create Date: 2026-12-07
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0044"
down_revision: str | None = "0043"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
KINDS = "CHECK (kind IN ({}))"


def begin() -> None:
    """A lock timeout; on Citus one connection per node, so that the rows a downgrade
    deletes are reached after the table's DDL in the same transaction."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


def kinds(*names: str) -> None:
    # Two statements: Citus takes no ADD CONSTRAINT beside another subcommand.
    op.execute("ALTER TABLE drafts DROP CONSTRAINT drafts_kind_check")
    allowed = KINDS.format(", ".join(f"'{n}'" for n in names))
    op.execute(f"ALTER TABLE drafts ADD CONSTRAINT drafts_kind_check {allowed}")


def upgrade() -> None:
    begin()
    op.execute(
        "ALTER TABLE drafts ADD COLUMN evidence jsonb NOT NULL DEFAULT '{}'::jsonb,"
        " ADD COLUMN key text"
    )
    kinds("fix", "instruction", "convention")


def downgrade() -> None:
    begin()
    # The conventions have no place before this revision. drafts forces row-level security
    # on its owner too, so the owner sets it aside for this statement.
    op.execute("ALTER TABLE drafts NO FORCE ROW LEVEL SECURITY")
    op.execute("DELETE FROM drafts WHERE kind = 'convention'")
    op.execute("ALTER TABLE drafts FORCE ROW LEVEL SECURITY")
    kinds("fix", "instruction")
    op.execute("ALTER TABLE drafts DROP COLUMN evidence, DROP COLUMN key")
