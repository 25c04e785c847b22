"""scope indexes hold the person: memories_scope_count_key and memories_scope_vectors_key
include personal_to, so that a scope's count and its exact read stay index-only under the
row policy of migration 0045, which reads personal_to on every row the service's role
sees. Without it each read took a page of the table for each row of the scope: a 1%
repository's count at 100,000 memories read 1,002 pages (17 ms from disk, 5.9 in the
buffers) where the index alone answers in 0.5 (docs/benchmarks.md, issue 69). An entry of
memories_scope_vectors_key grows by 16 bytes, within the room memory_vector_indexable()
leaves under the b-tree's 2,704 (its 2,400 for the names and the vector, and about 90 for
the other included columns)

Revision ID: 0049
Revises: 0048
Create Date: 2026-12-07
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0049"
down_revision: str | None = "0048"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
LIVE = "WHERE superseded_by IS NULL AND archived_at IS NULL"
SCOPE_VECTORS = (
    "memories_scope_vectors_key",
    "ON memories (tenant_id, source_repo)"
    " INCLUDE (id, memory_type, trust_level, relevance_score, created_at, embedding{person})"
    f" {LIVE} AND memory_vector_indexable(tenant_id, source_repo, embedding)",
)
SCOPE_COUNT = ("memories_scope_count_key", "ON memories (tenant_id, source_repo){person} " + LIVE)


def build(index: tuple[str, str], person: str) -> None:
    """Made again without blocking writes (an interrupted build's invalid index dropped
    first); searches meanwhile count and read the scope through the other indexes."""
    name, definition = index
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        op.execute(f"CREATE INDEX CONCURRENTLY {name} {definition.format(person=person)}")


def upgrade() -> None:
    build(SCOPE_COUNT, " INCLUDE (personal_to)")
    build(SCOPE_VECTORS, ", personal_to")


def downgrade() -> None:
    build(SCOPE_COUNT, "")
    build(SCOPE_VECTORS, "")
