"""add memories.context: the situation a memory came from, searchable but not its identity

A memory is often unfindable by its own words: "Yes, it was the blue one" answers a
question only the turn before it holds; a learning's words rarely repeat the task it was
learned in. `context` carries that situation. The keyword side indexes it at weight D (with the
words inside camelCase identifiers; the search weighs D at a fifth of the content), and
the embedding reads it after the content, so the memory is found through it while a
memory whose own words match still ranks first.
Dedup and the content hash stay on the content alone: the same memory seen in another
context is reinforced, not stored twice. The context has its own hash, which the
read-time integrity check verifies with the content's.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"

# The body of revision 0002's function, which this one extends with the context.
_CAMEL_CASE_WORDS = r"""setweight(to_tsvector('english'::regconfig, coalesce((
                   SELECT string_agg(regexp_replace(w[1], '([a-z0-9])([A-Z])', '\1 \2', 'g'), ' ')
                   FROM regexp_matches(content, '([A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*)', 'g') AS w
               ), '')), 'D')"""


def _trigger(call: str, columns: str) -> list[str]:
    return [
        f"""
        CREATE OR REPLACE FUNCTION memories_search_vector_trigger() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            NEW.search_vector := {call};
            RETURN NEW;
        END
        $$
        """,
        "DROP TRIGGER memories_search_vector_sync ON memories",
        f"""
        CREATE TRIGGER memories_search_vector_sync
            BEFORE INSERT OR UPDATE OF {columns} ON memories
            FOR EACH ROW EXECUTE FUNCTION memories_search_vector_trigger()
        """,
    ]


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute("ALTER TABLE memories ADD COLUMN context text, ADD COLUMN context_hash text")
    op.execute(
        f"""
        CREATE FUNCTION memories_search_vector(
            content text, category text, tags text[], context text)
        RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN setweight(to_tsvector('english'::regconfig, coalesce(content, '')), 'A')
            || setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'B')
            || setweight(to_tsvector('english'::regconfig,
                                     coalesce(array_to_string(tags, ' '), '')), 'C')
            || setweight(to_tsvector('english'::regconfig, coalesce(context, '')), 'D')
            || {_CAMEL_CASE_WORDS}
        """
    )
    for statement in _trigger(
        "memories_search_vector(NEW.content, NEW.category, NEW.tags, NEW.context)",
        "content, category, tags, context",
    ):
        op.execute(statement)
    # No rewrite: every existing row has no context, so its search_vector is unchanged.


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    for statement in _trigger(
        "memories_search_vector(NEW.content, NEW.category, NEW.tags)",
        "content, category, tags",
    ):
        op.execute(statement)
    op.execute("DROP FUNCTION memories_search_vector(text, text, text[], text)")
    op.execute("ALTER TABLE memories DROP COLUMN context, DROP COLUMN context_hash")
