"""index memories newest-first; dedup key led by content_hash

- memories_recent_key (tenant_id, created_at, id): GET /memories without a repository
  sorted every row of the tenant (10 ms at 10k rows, linear beyond); now it reads the
  newest rows first (0.5 ms).
- memories_dedup_key becomes (tenant_id, content_hash, source_repo): the lookup of one
  memory by its content (reinforcing it without re-embedding) is then an index search
  on its most selective column, whatever the planner believes about source_repo. Led by
  source_repo, a stale estimate of the rows without a repository sent that lookup to
  memories_list_key and a scan of every such row (4 ms a lookup after a few hundred).
  Same columns, so ON CONFLICT (tenant_id, source_repo, content_hash) still finds it.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def _dedup_key(columns: str) -> None:
    op.execute(
        f"CREATE UNIQUE INDEX memories_dedup_key_new ON memories ({columns}) NULLS NOT DISTINCT"
    )
    op.execute("DROP INDEX memories_dedup_key")
    op.execute("ALTER INDEX memories_dedup_key_new RENAME TO memories_dedup_key")


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("CREATE INDEX memories_recent_key ON memories (tenant_id, created_at, id)")
    _dedup_key("tenant_id, content_hash, source_repo")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    _dedup_key("tenant_id, source_repo, content_hash")
    op.execute("DROP INDEX memories_recent_key")
