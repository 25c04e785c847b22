"""on a Citus coordinator, distribute the tenant tables by tenant_id; elsewhere nothing

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-23
"""

from collections.abc import Sequence
from typing import Any

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


def on_citus(connection: Any) -> bool:
    """Whether the migration's connection is to a Citus coordinator."""
    return bool(connection.exec_driver_sql(CITUS_INSTALLED).scalar())


# Co-located with memories, so that a tenant's rows of every table sit on one worker.
TENANT_TABLES = ("memories", "sessions", "idempotency_keys")
# Looked up by a key's hash before the tenant is known: a copy on every node.
REFERENCE_TABLES = ("api_keys",)


def upgrade() -> None:
    if not on_citus(op.get_bind()):
        return
    # The search-vector trigger runs on each shard; Citus asks for this to distribute a
    # table that has one.
    op.execute("SET LOCAL citus.enable_unsafe_triggers TO on")
    for table in REFERENCE_TABLES:
        op.execute(f"SELECT create_reference_table('{table}')")
    first, *others = TENANT_TABLES
    op.execute(f"SELECT create_distributed_table('{first}', 'tenant_id')")
    for table in others:
        op.execute(
            f"SELECT create_distributed_table('{table}', 'tenant_id', colocate_with => '{first}')"
        )


def downgrade() -> None:
    if not on_citus(op.get_bind()):
        return
    for table in (*reversed(TENANT_TABLES), *REFERENCE_TABLES):
        op.execute(f"SELECT undistribute_table('{table}', cascade_via_foreign_keys => true)")
