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

from collections.abc import Mapping, Sequence
from typing import Any

from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


def on_citus(connection: Any) -> bool:
    """Whether the migration's connection is to a Citus coordinator."""
    return bool(connection.exec_driver_sql(CITUS_INSTALLED).scalar())


def set_storage(storage: Mapping[str, str], on_citus: bool) -> list[str]:
    """Statements, for one transaction, that give these columns of `memories` this storage.
    Citus refuses SET STORAGE on a distributed table: there the coordinator's table, whose
    definition a new shard copies, and then each shard are altered."""
    columns = ", ".join(f"ALTER COLUMN {name} SET STORAGE {kind}" for name, kind in storage.items())
    if not on_citus:
        return [f"ALTER TABLE memories {columns}"]
    return [
        "SET LOCAL citus.enable_ddl_propagation TO off",
        f"ALTER TABLE memories {columns}",
        "SET LOCAL citus.enable_ddl_propagation TO on",
        f"""DO $do$
            DECLARE refused text;
            BEGIN
                SELECT string_agg(shardid || ': ' || result, '; ') INTO refused
                  FROM run_command_on_shards('memories', 'ALTER TABLE %s {columns}')
                 WHERE NOT success;
                IF refused IS NOT NULL THEN
                    RAISE EXCEPTION 'shards refused the storage change: %', refused;
                END IF;
            END
            $do$""",
    ]


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
