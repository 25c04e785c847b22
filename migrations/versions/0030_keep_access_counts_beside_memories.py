# ruff: noqa: E501 - the function is held verbatim, as its file had it
"""keep a memory's access counts beside it, in memory_access, not in its row: a search that
counts what it returned rewrote each returned memory's row, and a row that cannot be
rewritten on its own page puts its vector into the HNSW graph again, leaving a dead entry
behind; at a million memories those hid one query's neighbours until a vacuum with index
cleanup. memory_vector_candidates() no longer returns the counts (the search reads them)

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-26
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

from app.db.migrations import begin_function_change, on_citus

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP_ROLE = "agent_memory_app"
VECTOR = (
    "public.memory_vector_candidates(vector, integer, tsquery, text, text, text[], text[],"
    " text[], real, boolean, boolean)"
)

# As migration 0029 made it (its file then).
VECTOR_BEFORE = r"""CREATE OR REPLACE FUNCTION public.memory_vector_candidates(
    query vector, max_rows integer, all_terms tsquery, tenant text, repo text, types text[],
    tags text[], trust text[], min_relevance real, include_archived boolean,
    with_global boolean)
 RETURNS TABLE(id uuid, pinned boolean, last_accessed_at timestamp with time zone, created_at timestamp with time zone, access_count integer, relevance_score real, vector_similarity double precision, holds_all_terms boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
        DECLARE
            -- Every statement below takes this one value and reads its fields by name
            -- (the type: migration 0025).
            search public.memory_vector_search;
            live constant text := '
                 FROM public.memories m
                 WHERE m.tenant_id = ($1).tenant
                   AND m.superseded_by IS NULL
                   AND (($1).include_archived OR m.archived_at IS NULL)';
            in_repo constant text := '
                   AND (($1).repo IS NULL OR m.source_repo = ($1).repo
                        OR (($1).with_global AND m.source_repo IS NULL))';
            -- in_repo as two ranges of an index, where the OR would read the heap.
            repo_part constant text := '
                   AND (($1).repo IS NULL OR m.source_repo = ($1).repo)';
            global_part constant text := '
                   AND ($1).repo IS NOT NULL AND ($1).with_global AND m.source_repo IS NULL';
            filters constant text := '
                   AND m.embedding IS NOT NULL
                   AND (($1).types IS NULL OR m.memory_type = ANY (($1).types))
                   AND (($1).tags IS NULL OR m.tags @> ($1).tags)
                   AND (($1).trust IS NULL OR m.trust_level = ANY (($1).trust))
                   AND (($1).min_relevance IS NULL OR m.relevance_score >= ($1).min_relevance)';
            factor constant real :=
                coalesce(nullif(current_setting('app.vector_exact_factor', true), ''), '0')::real;
            graph_rows real;
            scope_rows bigint;
            tag_rows real;
        BEGIN
            search.query := query;
            search.max_rows := max_rows;
            search.all_terms := all_terms;
            search.tenant := tenant;
            search.repo := repo;
            search.types := types;
            search.tags := tags;
            search.trust := trust;
            search.min_relevance := min_relevance;
            search.include_archived := include_archived;
            search.with_global := with_global;
            search.exact_bound := 0;
            IF factor > 0 THEN
                -- reltuples: ANALYZE's count, -1 before the first (then the graph is read).
                SELECT c.reltuples INTO graph_rows
                  FROM pg_class c WHERE c.oid = 'public.memories'::regclass;
                search.exact_bound := floor(sqrt(factor * greatest(graph_rows, 0)));
            END IF;
            IF search.exact_bound > 0 THEN
                IF search.tags IS NOT NULL THEN
                    tag_rows := public.memory_tags_share(search.tags) * greatest(graph_rows, 0);
                END IF;
                IF tag_rows <= search.exact_bound THEN
                    scope_rows := ceil(tag_rows);
                ELSE
                    EXECUTE 'SELECT (SELECT count(*) FROM (SELECT 1' || live || repo_part || '
                                     LIMIT ($1).exact_bound + 1) repo_rows)
                                  + (SELECT count(*) FROM (SELECT 1' || live || global_part || '
                                     LIMIT ($1).exact_bound + 1) global_rows)'
                    INTO scope_rows
                    USING search;
                END IF;
                IF scope_rows <= search.exact_bound THEN
                    -- "+ 0": the same order, in a form the HNSW index cannot serve.
                    RETURN QUERY EXECUTE
                        'SELECT hit.id, hit.pinned, hit.last_accessed_at, hit.created_at,
                                hit.access_count, hit.relevance_score,
                                greatest(0, 1 - nearest.distance)::float8,
                                hit.search_vector @@ ($1).all_terms
                         FROM (SELECT * FROM (SELECT m.id, (m.embedding <=> ($1).query) + 0 AS distance'
                               || live || repo_part || filters || '
                               ORDER BY 2 LIMIT ($1).max_rows) repo_rows
                               UNION ALL
                               SELECT * FROM (SELECT m.id, (m.embedding <=> ($1).query) + 0'
                               || live || global_part || filters || '
                               ORDER BY 2 LIMIT ($1).max_rows) global_rows
                               ORDER BY distance LIMIT ($1).max_rows) nearest
                         JOIN public.memories hit
                           ON hit.tenant_id = ($1).tenant AND hit.id = nearest.id
                         ORDER BY nearest.distance'
                    USING search;
                    RETURN;
                END IF;
            END IF;
            RETURN QUERY EXECUTE
                'SELECT m.id, m.pinned, m.last_accessed_at, m.created_at, m.access_count,
                        m.relevance_score,
                        greatest(0, 1 - (m.embedding <=> ($1).query))::float8,
                        m.search_vector @@ ($1).all_terms'
                || live || in_repo || filters || '
                 ORDER BY m.embedding <=> ($1).query LIMIT ($1).max_rows'
            USING search;
        END
        $function$;
"""


def function_as_made(name: str) -> str:
    """The function's text as this revision made it (migrations/sql/<name>/<revision>.sql),
    never edited once shipped: an upgrade from any revision runs what this one ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{revision}.sql").read_text()


def upgrade() -> None:
    begin_function_change()
    op.execute(
        """
        CREATE TABLE memory_access (
            tenant_id        text        NOT NULL,
            memory_id        uuid        NOT NULL,
            access_count     integer     NOT NULL DEFAULT 0,
            last_accessed_at timestamptz,
            PRIMARY KEY (tenant_id, memory_id),
            FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id)
                ON DELETE CASCADE
        )
        """
    )
    # Rewritten in place on every count: room on each page for the next version.
    op.execute("ALTER TABLE memory_access SET (fillfactor = 70)")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON memory_access TO {APP_ROLE}")
    op.execute("ALTER TABLE memory_access ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE memory_access FORCE ROW LEVEL SECURITY")
    op.execute(
        """
        CREATE POLICY tenant_isolation ON memory_access
            USING (tenant_id = current_setting('app.tenant_id', true))
            WITH CHECK (tenant_id = current_setting('app.tenant_id', true))
        """
    )
    if on_citus(op.get_bind()):
        op.execute(
            "SELECT create_distributed_table('memory_access', 'tenant_id',"
            " colocate_with => 'memories')"
        )
    # Every tenant's counts: the owner reads past row-level security for this transaction.
    _copy(
        """
        INSERT INTO memory_access (tenant_id, memory_id, access_count, last_accessed_at)
        SELECT m.tenant_id, m.id, m.access_count, m.last_accessed_at FROM memories m
        WHERE m.access_count > 0 OR m.last_accessed_at IS NOT NULL
        """
    )
    # Statistics from the start: a search's plan is made from them.
    op.execute("ANALYZE memory_access")
    op.execute(f"DROP FUNCTION {VECTOR}")
    op.execute(function_as_made("memory_vector_candidates"))
    _grant_vector()
    op.execute("ALTER TABLE memories DROP COLUMN access_count, DROP COLUMN last_accessed_at")


def downgrade() -> None:
    begin_function_change()
    op.execute(
        "ALTER TABLE memories ADD COLUMN access_count integer NOT NULL DEFAULT 0,"
        " ADD COLUMN last_accessed_at timestamptz"
    )
    _copy(
        """
        UPDATE memories m SET access_count = a.access_count, last_accessed_at = a.last_accessed_at
        FROM memory_access a
        WHERE m.tenant_id = a.tenant_id AND m.id = a.memory_id
        """
    )
    op.execute(f"DROP FUNCTION {VECTOR}")
    op.execute(VECTOR_BEFORE)
    _grant_vector()
    op.execute("DROP TABLE memory_access")


def _copy(statement: str) -> None:
    """`statement` over every tenant's rows: memories forces row-level security on its
    owner too, so the owner sets it aside for this transaction."""
    op.execute("ALTER TABLE memories NO FORCE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE memory_access NO FORCE ROW LEVEL SECURITY")
    op.execute(statement)
    op.execute("ALTER TABLE memories FORCE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE memory_access FORCE ROW LEVEL SECURITY")


def _grant_vector() -> None:
    op.execute(f"REVOKE ALL ON FUNCTION {VECTOR} FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION {VECTOR} TO {APP_ROLE}")
