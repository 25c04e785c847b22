"""add source_repo to the keyword (GIN) index, and let repository-scoped keyword hits use it

Most searches are scoped to one repository. With the repository inside the GIN index, a
scoped keyword lookup intersects the repository's posting list with the terms' instead of
reading every row of the tenant that holds the terms (measured at 100k rows, 1% in the
repository, three common terms: 7.1 -> 1.4 ms).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"

_SIGNATURE = """memory_keyword_hits(
    query tsquery, max_rows integer, repo text, types text[], tags text[],
    trust text[], min_relevance real, include_archived boolean)"""
_HEADER = f"""CREATE OR REPLACE FUNCTION {_SIGNATURE}
RETURNS TABLE (hit uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public"""
_OTHER_FILTERS = """
      AND m.search_vector @@ memory_keyword_hits.query
      AND m.superseded_by IS NULL
      AND (memory_keyword_hits.include_archived OR m.archived_at IS NULL)
      AND (memory_keyword_hits.types IS NULL
           OR m.memory_type = ANY (memory_keyword_hits.types))
      AND (memory_keyword_hits.tags IS NULL OR m.tags @> memory_keyword_hits.tags)
      AND (memory_keyword_hits.trust IS NULL
           OR m.trust_level = ANY (memory_keyword_hits.trust))
      AND (memory_keyword_hits.min_relevance IS NULL
           OR m.relevance_score >= memory_keyword_hits.min_relevance)"""

# One branch per case, so that the repository is an index condition where there is one
# (`repo IS NULL OR source_repo = repo` can never be): only one branch returns rows.
_SPLIT_BODY = f"""
    (SELECT m.id FROM public.memories m
     WHERE memory_keyword_hits.repo IS NOT NULL
       AND m.tenant_id = current_setting('app.tenant_id', true)
       AND m.source_repo = memory_keyword_hits.repo {_OTHER_FILTERS}
     LIMIT memory_keyword_hits.max_rows)
    UNION ALL
    (SELECT m.id FROM public.memories m
     WHERE memory_keyword_hits.repo IS NULL
       AND m.tenant_id = current_setting('app.tenant_id', true) {_OTHER_FILTERS}
     LIMIT memory_keyword_hits.max_rows)
"""
# As revision 0008 created it.
_PREVIOUS_BODY = f"""
    SELECT m.id FROM public.memories m
    WHERE m.tenant_id = current_setting('app.tenant_id', true)
      AND (memory_keyword_hits.repo IS NULL OR m.source_repo = memory_keyword_hits.repo)
      {_OTHER_FILTERS}
    LIMIT memory_keyword_hits.max_rows
"""


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        "CREATE INDEX memories_keyword_key ON memories"
        " USING gin (tenant_id, source_repo, search_vector) WITH (fastupdate = off)"
    )
    op.execute("DROP INDEX memories_search_vector_key")
    op.execute(f"{_HEADER}\nAS $${_SPLIT_BODY}$$")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(f"{_HEADER}\nAS $${_PREVIOUS_BODY}$$")
    op.execute(
        "CREATE INDEX memories_search_vector_key ON memories"
        " USING gin (tenant_id, search_vector) WITH (fastupdate = off)"
    )
    op.execute("DROP INDEX memories_keyword_key")
