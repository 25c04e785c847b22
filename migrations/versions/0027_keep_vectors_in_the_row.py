"""keep each memory's vector and lexemes in its row (storage MAIN): a search reads both for
every row it weighs, and pgvector's default (EXTERNAL) moved the vector of every row over
2 KB, nearly every row, out to TOAST: a lookup of about five buffers per row, which made
the exact read of a small scope three times slower. The text a result returns goes out of
the row instead. Rows stored before keep their layout until rewritten
(docs/operations.md); nothing is rewritten here

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-25
"""

from collections.abc import Sequence

from alembic import op

from app.db.migrations import on_citus, set_storage

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# MAIN: compressed in the row if need be, moved out only when the row would not fit a page.
IN_ROW = {"embedding": "MAIN", "search_vector": "MAIN"}
# As their types left them.
BEFORE = {"embedding": "EXTERNAL", "search_vector": "EXTENDED"}


def apply(storage: dict[str, str]) -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    for statement in set_storage(storage, on_citus(op.get_bind())):
        op.execute(statement)


def upgrade() -> None:
    apply(IN_ROW)


def downgrade() -> None:
    apply(BEFORE)
