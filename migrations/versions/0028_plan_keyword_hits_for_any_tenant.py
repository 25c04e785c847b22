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

from app.db.migrations import begin_function_change, load_function

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# As migration 0023 made it.
KEYWORD_BEFORE = """CREATE OR REPLACE FUNCTION public.memory_keyword_hits(
    query tsquery, max_rows integer, repo text, types text[], tags text[], trust text[],
    min_relevance real, include_archived boolean, with_global boolean)
 RETURNS TABLE(hit uuid)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
AS $function$
    (SELECT m.id FROM public.memories m
     WHERE memory_keyword_hits.repo IS NOT NULL
       AND m.tenant_id = current_setting('app.tenant_id', true)
       AND m.source_repo = memory_keyword_hits.repo
       AND m.search_vector @@ memory_keyword_hits.query
       AND m.superseded_by IS NULL
       AND (memory_keyword_hits.include_archived OR m.archived_at IS NULL)
       AND (memory_keyword_hits.types IS NULL
            OR m.memory_type = ANY (memory_keyword_hits.types))
       AND (memory_keyword_hits.tags IS NULL OR m.tags @> memory_keyword_hits.tags)
       AND (memory_keyword_hits.trust IS NULL
            OR m.trust_level = ANY (memory_keyword_hits.trust))
       AND (memory_keyword_hits.min_relevance IS NULL
            OR m.relevance_score >= memory_keyword_hits.min_relevance)
     LIMIT memory_keyword_hits.max_rows)
    UNION ALL
    (SELECT m.id FROM public.memories m
     WHERE memory_keyword_hits.repo IS NOT NULL AND memory_keyword_hits.with_global
       AND m.tenant_id = current_setting('app.tenant_id', true)
       AND m.source_repo IS NULL
       AND m.search_vector @@ memory_keyword_hits.query
       AND m.superseded_by IS NULL
       AND (memory_keyword_hits.include_archived OR m.archived_at IS NULL)
       AND (memory_keyword_hits.types IS NULL
            OR m.memory_type = ANY (memory_keyword_hits.types))
       AND (memory_keyword_hits.tags IS NULL OR m.tags @> memory_keyword_hits.tags)
       AND (memory_keyword_hits.trust IS NULL
            OR m.trust_level = ANY (memory_keyword_hits.trust))
       AND (memory_keyword_hits.min_relevance IS NULL
            OR m.relevance_score >= memory_keyword_hits.min_relevance)
     LIMIT memory_keyword_hits.max_rows)
    UNION ALL
    (SELECT m.id FROM public.memories m
     WHERE memory_keyword_hits.repo IS NULL
       AND m.tenant_id = current_setting('app.tenant_id', true)
       AND m.search_vector @@ memory_keyword_hits.query
       AND m.superseded_by IS NULL
       AND (memory_keyword_hits.include_archived OR m.archived_at IS NULL)
       AND (memory_keyword_hits.types IS NULL
            OR m.memory_type = ANY (memory_keyword_hits.types))
       AND (memory_keyword_hits.tags IS NULL OR m.tags @> memory_keyword_hits.tags)
       AND (memory_keyword_hits.trust IS NULL
            OR m.trust_level = ANY (memory_keyword_hits.trust))
       AND (memory_keyword_hits.min_relevance IS NULL
            OR m.relevance_score >= memory_keyword_hits.min_relevance)
     LIMIT memory_keyword_hits.max_rows)
$function$;
"""


def upgrade() -> None:
    begin_function_change()
    load_function("memory_keyword_hits")


def downgrade() -> None:
    begin_function_change()
    op.execute(KEYWORD_BEFORE)
