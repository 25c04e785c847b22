"""memory_keyword_hits() is planned on every call, for the call's own tenant and term: a
connection kept its plan, made for whichever tenant happened to call first, and after a
first call from a tenant with no rows a large tenant's every term walked all its rows (40-60
times slower at ten thousand rows). Nothing else changes; the function returns the same rows

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

from app.db.migrations import begin_function_change

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


KEYWORD = (
    "public.memory_keyword_hits(tsquery, integer, text, text[], text[], text[], real,"
    " boolean, boolean)"
)


def upgrade() -> None:
    begin_function_change()
    # The function's one change (its file has it): the body is as migration 0023 made it.
    op.execute(f"ALTER FUNCTION {KEYWORD} SET plan_cache_mode = 'force_custom_plan'")


def downgrade() -> None:
    begin_function_change()
    op.execute(f"ALTER FUNCTION {KEYWORD} RESET plan_cache_mode")
