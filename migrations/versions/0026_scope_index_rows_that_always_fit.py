"""memories_vector_scope_key without the vector and the tags: a b-tree row holds at most
2,704 bytes, and a 384-dimension vector (1,540 bytes) beside up to 32 tags of 64
characters, or a long non-ASCII repository name, made a store fail with 500; with a model
of 768 dimensions every store would have. Its rows now hold only what always fits; the
exact read of a small scope takes each vector from its row

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-25
"""

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Self-contained: a migration imports no app code, which may change after it shipped.
def held_by(revision: str, name: str) -> Any:
    """What migration `revision` holds (its module's `name`), as it shipped: a downgrade
    restores it from there, so that each version is written once."""
    (path,) = Path(__file__).parent.glob(f"{revision}_*.py")
    spec = importlib.util.spec_from_file_location(f"migration_{revision}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


# At most 100 + 300 characters of key (1,600 bytes in UTF-8) and under 300 bytes more.
SCOPE_INDEX = (
    "ON memories (tenant_id, source_repo) INCLUDE (id, memory_type, trust_level, relevance_score)"
    " WHERE superseded_by IS NULL AND archived_at IS NULL"
)


def rebuild(definition: str) -> None:
    """Built beside the old one without blocking writes, then swapped in by name."""
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_vector_scope_rebuilt")
        op.execute(f"CREATE INDEX CONCURRENTLY memories_vector_scope_rebuilt {definition}")
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_vector_scope_key")
        op.execute("ALTER INDEX memories_vector_scope_rebuilt RENAME TO memories_vector_scope_key")


def upgrade() -> None:
    rebuild(SCOPE_INDEX)
    # A re-embed under way built a twin of the old index on its column; none is needed now.
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_vector_scope_next_key")


def downgrade() -> None:
    rebuild(held_by("0025", "INDEXES")["memories_vector_scope_key"])
