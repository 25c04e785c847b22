"""statements Citus can route: tag merging as a function; on Citus, the app role logs in

memory_merged_tags() is the reinforcement's tag merge, which was a subquery inside the
upsert's ON CONFLICT clause: Citus refuses subqueries in an INSERT, and takes a function
(propagated to every node). On a single PostgreSQL the planner inlines it as before.

The service runs its queries as agent_memory_app (SET ROLE), so that row-level security
applies. On Citus the coordinator opens its connections to the workers as the current
user, and a NOLOGIN role cannot be that user. How those connections authenticate is the
cluster's business (pg_hba.conf, pg_dist_authinfo or certificates: docs/scale-out.md).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-23
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


def on_citus(connection: Any) -> bool:
    """Whether the migration's connection is to a Citus coordinator."""
    return bool(connection.exec_driver_sql(CITUS_INSTALLED).scalar())


APP_ROLE = "agent_memory_app"


def upgrade() -> None:
    # Order kept (first appearance), no duplicates.
    op.execute(function_as_made("memory_merged_tags"))
    if on_citus(op.get_bind()):
        # Citus propagates ALTER ROLE to every node.
        op.execute(f"ALTER ROLE {APP_ROLE} LOGIN")


def downgrade() -> None:
    if on_citus(op.get_bind()):
        op.execute(f"ALTER ROLE {APP_ROLE} NOLOGIN")
    op.execute("DROP FUNCTION memory_merged_tags(text[], text[])")
