"""rank a scope from its vectors: memories_scope_vectors_key holds each live memory's vector
beside its tenant and repository, with the columns a search narrows by, so that the exact
read of a scope is one index-only range instead of a page for each of its rows (a 1%
repository of a million memories: 10,000 pages, 44 ms at p50 in the first run after a
start). memory_vector_candidates() ranks the scope's entries by exact distance, then reads
the rows in that order, each checked against the whole filter, until enough pass.
memory_vector_indexable() says which rows an entry holds: a b-tree entry has room for a
vector of 384 dimensions beside any ASCII names, but not for a long non-ASCII name or a
larger model, whose rows are left out and whose scopes are read from the rows as before.
memories_vector_scope_key, which only served that read, goes. The scope's count and its
exact read no longer give the planner the repository twice (once as the range, once in the
filter), which made it take a repository's 1,000 rows for 3 and read their pages through a
bitmap where the index alone answers

Revision ID: 0040
Revises: 0039
Create Date: 2026-11-29
"""

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0040"
down_revision: str | None = "0039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
INDEXABLE = "public.memory_vector_indexable(text, text, public.vector)"
SCOPE_VECTORS = (
    "ON memories (tenant_id, source_repo)"
    " INCLUDE (id, memory_type, trust_level, relevance_score, created_at, embedding)"
    " WHERE superseded_by IS NULL AND archived_at IS NULL"
    " AND memory_vector_indexable(tenant_id, source_repo, embedding)"
)


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def held_by(revision: str, name: str) -> Any:
    """What migration `revision` holds (its module's `name`), as it shipped."""
    (path,) = Path(__file__).parent.glob(f"{revision}_*.py")
    spec = importlib.util.spec_from_file_location(f"migration_{revision}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def begin_function_change() -> None:
    """First in a migration that replaces functions: a lock timeout, and on Citus one
    connection per node (it refuses a function command after a parallel operation on a
    distributed table in the same transaction)."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


def build(name: str, definition: str) -> None:
    """Built without blocking writes; an interrupted build's invalid index is dropped first."""
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        op.execute(f"CREATE INDEX CONCURRENTLY {name} {definition}")


def drop(name: str) -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


def upgrade() -> None:
    begin_function_change()
    op.execute(function_as_made("memory_vector_indexable"))
    op.execute(f"REVOKE ALL ON FUNCTION {INDEXABLE} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {INDEXABLE} TO agent_memory_app")
    # The filter within a range (no repository), and what an entry is ranked by; CASCADE:
    # nothing stores the type.
    op.execute(
        "ALTER TYPE public.memory_vector_search ADD ATTRIBUTE within public.memory_filter,"
        " ADD ATTRIBUTE ranked public.memory_filter CASCADE"
    )
    op.execute(function_as_made("memory_vector_candidates"))
    build("memories_scope_vectors_key", SCOPE_VECTORS)
    drop("memories_vector_scope_key")


def downgrade() -> None:
    build("memories_vector_scope_key", held_by("0026", "SCOPE_INDEX"))
    drop("memories_scope_vectors_key")
    begin_function_change()
    op.execute(function_as_made("memory_vector_candidates", "0038"))
    op.execute(
        "ALTER TYPE public.memory_vector_search DROP ATTRIBUTE within,"
        " DROP ATTRIBUTE ranked CASCADE"
    )
    op.execute(f"DROP FUNCTION {INDEXABLE}")
