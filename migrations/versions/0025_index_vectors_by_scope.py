# ruff: noqa: E501 - the downgrade holds the function verbatim, as its file had it
"""index the live memories' vectors by tenant and repository, so that a search in a scope
small beside the graph reads its vectors from one range of an index (memories_vector_scope_key)
after counting them in another (memories_scope_count_key); memory_vector_candidates()
bounds that exact read by the square root of app.vector_exact_factor times the rows in the
graph. And the live memories' tags (memories_tags_key), through which the planner reads a
rare tag's rows instead of walking the graph for them

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-25
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FUNCTIONS = Path(__file__).resolve().parents[2] / "app" / "repository" / "functions"
# As 0024 left it, for the downgrade (same signature: CREATE OR REPLACE keeps its grants).
OLD_VECTOR = r"""
-- The vector side's candidates, planned on every call for its own values (dynamic SQL).
-- A scope of at most app.vector_exact_below rows (counted, up to that many, through the
-- b-tree) is read whole and sorted by exact distance: cheaper there than an HNSW scan,
-- which walks far through the graph to find a small scope's rows, and exact. A larger
-- scope takes HNSW with iterative scan. A repository's search takes its rows and, with
-- with_global, the memories of no repository.
CREATE OR REPLACE FUNCTION public.memory_vector_candidates(
    query vector, max_rows integer, all_terms tsquery, tenant text, repo text, types text[],
    tags text[], trust text[], min_relevance real, include_archived boolean,
    with_global boolean)
 RETURNS TABLE(id uuid, pinned boolean, last_accessed_at timestamp with time zone, created_at timestamp with time zone, access_count integer, relevance_score real, vector_similarity double precision, holds_all_terms boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
        DECLARE
            scope constant text := '
                 FROM public.memories m
                 WHERE m.tenant_id = $4
                   AND m.superseded_by IS NULL
                   AND ($10 OR m.archived_at IS NULL)
                   AND ($5 IS NULL OR m.source_repo = $5
                        OR ($11 AND m.source_repo IS NULL))
                   AND ($6 IS NULL OR m.memory_type = ANY ($6))
                   AND ($7 IS NULL OR m.tags @> $7)
                   AND ($8 IS NULL OR m.trust_level = ANY ($8))
                   AND ($9 IS NULL OR m.relevance_score >= $9)
                   AND m.embedding IS NOT NULL';
            exact_below integer :=
                coalesce(nullif(current_setting('app.vector_exact_below', true), ''), '0')::integer;
            scope_rows bigint := exact_below + 1;
        BEGIN
            IF exact_below > 0 THEN
                -- The same parameters as the search below; the bound is an integer.
                EXECUTE 'SELECT count(*) FROM (SELECT 1 ' || scope
                        || ' LIMIT ' || (exact_below + 1) || ') s'
                INTO scope_rows
                USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                      min_relevance, include_archived, with_global;
            END IF;
            RETURN QUERY EXECUTE
                'SELECT m.id, m.pinned, m.last_accessed_at, m.created_at, m.access_count,
                        m.relevance_score,
                        greatest(0, 1 - (m.embedding <=> $1))::float8,
                        m.search_vector @@ $3'
                || scope
                -- "+ 0": the same order, in a form the HNSW index cannot serve.
                || CASE WHEN scope_rows <= exact_below
                        THEN ' ORDER BY (m.embedding <=> $1) + 0 LIMIT $2'
                        ELSE ' ORDER BY m.embedding <=> $1 LIMIT $2' END
            USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                  min_relevance, include_archived, with_global;
        END
        $function$;
"""


def begin() -> None:
    """The lock timeout; on Citus, one connection per node for the whole migration (it
    refuses a function command after a parallel operation on a distributed table)."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    on_citus = (
        op.get_bind().exec_driver_sql("SELECT 1 FROM pg_extension WHERE extname = 'citus'").scalar()
    )
    if on_citus:
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


# Built without blocking writes (a million rows take about 20 s). An interrupted build
# leaves an invalid index behind: dropped and made again.
INDEXES = {
    # The vector and every column a search filters on, so that the exact read is an
    # index-only scan of one contiguous range (a vector read from the row costs a TOAST
    # lookup: five buffers). Re-embedding builds its twin on the new column
    # (app/repository/reembed.py).
    "memories_vector_scope_key": "ON memories (tenant_id, source_repo)"
    " INCLUDE (id, memory_type, trust_level, relevance_score, tags, embedding)"
    " WHERE superseded_by IS NULL AND archived_at IS NULL",
    # The scope's size, read without the heap or the vectors.
    "memories_scope_count_key": "ON memories (tenant_id, source_repo)"
    " WHERE superseded_by IS NULL AND archived_at IS NULL",
    # A tag's live rows: for a rare tag the planner reads them, sorted by exact distance,
    # rather than walk the graph until enough of them pass.
    "memories_tags_key": "ON memories USING gin (tenant_id, tags) WITH (fastupdate = off)"
    " WHERE superseded_by IS NULL AND archived_at IS NULL",
}


def upgrade() -> None:
    begin()
    # Right with or without the indexes; faster with them.
    op.execute((FUNCTIONS / "memory_vector_candidates.sql").read_text())
    with op.get_context().autocommit_block():
        for name, definition in INDEXES.items():
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            op.execute(f"CREATE INDEX CONCURRENTLY {name} {definition}")


def downgrade() -> None:
    begin()
    op.execute(OLD_VECTOR)
    op.execute("DROP INDEX memories_tags_key")
    op.execute("DROP INDEX memories_scope_count_key")
    op.execute("DROP INDEX memories_vector_scope_key")
