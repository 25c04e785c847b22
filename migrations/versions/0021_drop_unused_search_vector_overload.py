"""drop memories_search_vector(text, text, text[]): unused since 0013 added the context

Every function's current text is one file under app/repository/functions/ (a test checks
that the database's definition equals it); a migration that changes a function installs
the text it made, kept in migrations/sql/<function>/<revision>.sql.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-25
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("DROP FUNCTION memories_search_vector(text, text, text[])")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    # As 0002 made it; 0013's downgrade puts the trigger back on it.
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
