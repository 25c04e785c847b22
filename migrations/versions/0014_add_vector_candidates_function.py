"""add memory_vector_candidates(): the vector side of a search, planned for its own values

A search is one statement of some 25 CTEs, and planning it costs about 2 ms, a fifth of a
search at 10k rows. Only its vector side has a plan that depends on the values: through
HNSW when the scope is large, exactly through a b-tree when it is small (a repository
holding half of 100k rows, given the plan made for an average one, took 240 ms instead
of 17). This function plans that one small query on every call (plpgsql EXECUTE), so the
statement around it can keep one plan per connection.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"
APP_ROLE = "agent_memory_app"

_SIGNATURE = """memory_vector_candidates(
    query vector, max_rows integer, all_terms tsquery, tenant text, repo text,
    types text[], tags text[], trust text[], min_relevance real, include_archived boolean)"""
_ARGUMENT_TYPES = "vector, integer, tsquery, text, text, text[], text[], text[], real, boolean"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    # SECURITY INVOKER: row-level security applies as to any query of the caller's. The
    # parameters are constants to the planner (EXECUTE plans once per call), so a filter
    # that is not given folds away and the repository's or tenant's own row estimate
    # chooses between HNSW and an exact scan. holds_all_terms is NULL unless `all_terms`
    # is given (the operator is strict: no tsvector is read for it otherwise).
    op.execute(
        f"""
        CREATE FUNCTION {_SIGNATURE}
        RETURNS TABLE (
            id uuid, pinned boolean, last_accessed_at timestamptz, created_at timestamptz,
            access_count integer, relevance_score real, vector_similarity float8,
            holds_all_terms boolean)
        LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public
        AS $fn$
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
        $fn$
        """
    )
    op.execute(f"REVOKE ALL ON FUNCTION memory_vector_candidates({_ARGUMENT_TYPES}) FROM PUBLIC")
    op.execute(
        f"GRANT EXECUTE ON FUNCTION memory_vector_candidates({_ARGUMENT_TYPES}) TO {APP_ROLE}"
    )


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(f"DROP FUNCTION memory_vector_candidates({_ARGUMENT_TYPES})")
