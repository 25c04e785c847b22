"""add search_vector: weighted full-text kept by a trigger

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("ALTER TABLE memories ADD COLUMN search_vector tsvector")
    # A = content, B = category, C = tags; D = the words inside camelCase identifiers
    # (checkRateLimit -> check rate limit), so "rate limit" finds them too, while the
    # whole identifier stays one A lexeme for exact queries.
    op.execute(
        r"""
        CREATE FUNCTION memories_search_vector(content text, category text, tags text[])
        RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN setweight(to_tsvector('english'::regconfig, coalesce(content, '')), 'A')
            || setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'B')
            || setweight(to_tsvector('english'::regconfig,
                                     coalesce(array_to_string(tags, ' '), '')), 'C')
            || setweight(to_tsvector('english'::regconfig, coalesce((
                   SELECT string_agg(regexp_replace(w[1], '([a-z0-9])([A-Z])', '\1 \2', 'g'), ' ')
                   FROM regexp_matches(content, '([A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*)', 'g') AS w
               ), '')), 'D')
        """
    )
    op.execute(
        """
        CREATE FUNCTION memories_search_vector_trigger() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            NEW.search_vector := memories_search_vector(NEW.content, NEW.category, NEW.tags);
            RETURN NEW;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER memories_search_vector_sync
            BEFORE INSERT OR UPDATE OF content, category, tags ON memories
            FOR EACH ROW EXECUTE FUNCTION memories_search_vector_trigger()
        """
    )
    op.execute(
        "UPDATE memories SET search_vector = memories_search_vector(content, category, tags)"
    )
    op.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
    # tenant_id leads here too (btree_gin), so one tenant's terms never scan another's.
    op.execute(
        "CREATE INDEX memories_search_vector_key ON memories"
        " USING gin (tenant_id, search_vector) WITH (fastupdate = off)"
    )


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("DROP INDEX memories_search_vector_key")
    op.execute("DROP TRIGGER memories_search_vector_sync ON memories")
    op.execute("DROP FUNCTION memories_search_vector_trigger()")
    op.execute("DROP FUNCTION memories_search_vector(text, text, text[])")
    op.execute("ALTER TABLE memories DROP COLUMN search_vector")
