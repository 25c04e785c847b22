"""rules written in files: what a developer wrote for their agents (CLAUDE.md, AGENTS.md, a
Cursor rule, ...) queued as drafts by `agent-memory import-files`. A draft of a person's own
file (in their home, read in every repository) is filed under no repository
(`source_repo` NULL, as a memory is); and a memory kept from a rule since deleted from its
file is proposed for retirement (`unwritten`), for a person to accept or dismiss.

A downgrade deletes what the revision before has no place for: the drafts of no
repository and the `unwritten` proposals.

Revision ID: 0047
Revises: 0046
Create Date: 2026-12-07
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0047"
down_revision: str | None = "0046"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
KINDS = "CHECK (kind IN ({}))"


def begin() -> None:
    """A lock timeout; on Citus one connection per node, so that the rows a downgrade
    deletes are reached after the tables' DDL in the same transaction."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


def proposal_kinds(*names: str) -> None:
    # Two statements: Citus takes no ADD CONSTRAINT beside another subcommand.
    op.execute("ALTER TABLE proposals DROP CONSTRAINT proposals_kind_check")
    allowed = KINDS.format(", ".join(f"'{n}'" for n in names))
    op.execute(f"ALTER TABLE proposals ADD CONSTRAINT proposals_kind_check {allowed}")


def upgrade() -> None:
    begin()
    op.execute("ALTER TABLE drafts ALTER COLUMN source_repo DROP NOT NULL")
    proposal_kinds("merge", "replace", "retire", "unwritten")


def downgrade() -> None:
    begin()
    # Both tables force row-level security on their owner too: set aside for the deletes,
    # which are the owner's, of every tenant and person.
    op.execute("SET LOCAL app.every_person = 'on'")
    for table in ("drafts", "proposals"):
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    op.execute("DELETE FROM drafts WHERE source_repo IS NULL")
    op.execute("DELETE FROM proposals WHERE kind = 'unwritten'")
    for table in ("drafts", "proposals"):
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    proposal_kinds("merge", "replace", "retire")
    op.execute("ALTER TABLE drafts ALTER COLUMN source_repo SET NOT NULL")
