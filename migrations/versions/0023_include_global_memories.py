# ruff: noqa: E501 - the downgrade holds a function verbatim, as the database printed it
"""global memories: a repository's search and snapshot also take the memories filed under no
repository (a person's or a team's conventions); the index readers take `with_global`

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-25
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


def on_citus(connection: Any) -> bool:
    """Whether the migration's connection is to a Citus coordinator."""
    return bool(connection.exec_driver_sql(CITUS_INSTALLED).scalar())


def begin_function_change() -> None:
    """First in a migration that replaces functions: a lock timeout, and on Citus one
    connection per node (it refuses a function command after a parallel operation on a
    distributed table in the same transaction)."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if on_citus(op.get_bind()):
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


APP_ROLE = "agent_memory_app"
KEYWORD = "memory_keyword_hits(tsquery, integer, text, text[], text[], text[], real, boolean"
VECTOR = (
    "memory_vector_candidates(vector, integer, tsquery, text, text, text[], text[], text[],"
    " real, boolean"
)
# As 0014 left it, for the downgrade.
OLD_VECTOR = r"""CREATE OR REPLACE FUNCTION public.memory_vector_candidates(query vector, max_rows integer, all_terms tsquery, tenant text, repo text, types text[], tags text[], trust text[], min_relevance real, include_archived boolean)
 RETURNS TABLE(id uuid, pinned boolean, last_accessed_at timestamp with time zone, created_at timestamp with time zone, access_count integer, relevance_score real, vector_similarity double precision, holds_all_terms boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
        BEGIN
            RETURN QUERY EXECUTE
                'SELECT m.id, m.pinned, m.last_accessed_at, m.created_at, m.access_count,
                        m.relevance_score,
                        greatest(0, 1 - (m.embedding <=> $1))::float8,
                        m.search_vector @@ $3
                 FROM public.memories m
                 WHERE m.tenant_id = $4
                   AND m.superseded_by IS NULL
                   AND ($10 OR m.archived_at IS NULL)
                   AND ($5 IS NULL OR m.source_repo = $5)
                   AND ($6 IS NULL OR m.memory_type = ANY ($6))
                   AND ($7 IS NULL OR m.tags @> $7)
                   AND ($8 IS NULL OR m.trust_level = ANY ($8))
                   AND ($9 IS NULL OR m.relevance_score >= $9)
                   AND m.embedding IS NOT NULL
                 ORDER BY m.embedding <=> $1
                 LIMIT $2'
            USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                  min_relevance, include_archived;
        END
        $function$;
"""


def _grant(signature: str) -> None:
    op.execute(f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {signature} TO {APP_ROLE}")


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


def upgrade() -> None:
    begin_function_change()
    op.execute(f"DROP FUNCTION {KEYWORD})")
    op.execute(f"DROP FUNCTION {VECTOR})")
    op.execute(function_as_made("memory_keyword_hits"))
    op.execute(function_as_made("memory_vector_candidates"))
    _grant(f"{KEYWORD}, boolean)")
    _grant(f"{VECTOR}, boolean)")
    # The global memories' keyword hits, by index like a repository's.
    op.execute(
        "CREATE INDEX memories_global_search_key ON memories"
        " USING gin (tenant_id, search_vector) WITH (fastupdate = off)"
        " WHERE source_repo IS NULL"
    )


def downgrade() -> None:
    begin_function_change()
    op.execute("DROP INDEX memories_global_search_key")
    op.execute(f"DROP FUNCTION {KEYWORD}, boolean)")
    op.execute(f"DROP FUNCTION {VECTOR}, boolean)")
    op.execute(function_as_made("memory_keyword_hits", "0012"))
    op.execute(OLD_VECTOR)
    _grant(f"{KEYWORD})")
    _grant(f"{VECTOR})")
