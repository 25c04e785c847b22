"""add row-level security: the application role sees only its transaction's tenant

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def function_as_made(name: str, at: str = revision) -> str:
    """The function's text as revision `at` made it (migrations/sql/<name>/<at>.sql, never
    edited once shipped): an upgrade or a downgrade runs what that revision ran."""
    return (Path(__file__).resolve().parents[1] / "sql" / name / f"{at}.sql").read_text()


LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'"
APP_ROLE = "agent_memory_app"
TENANT_TABLES = ("memories", "sessions")


def upgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    # Roles are cluster-wide: create once, never superuser, never BYPASSRLS, owns nothing.
    op.execute(
        f"""
        DO $$
        BEGIN
            IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
                CREATE ROLE {APP_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
            END IF;
        END
        $$
        """
    )
    # The migrating user switches to it per connection (SET ROLE).
    op.execute(f"GRANT {APP_ROLE} TO CURRENT_USER")
    op.execute(f"GRANT USAGE ON SCHEMA public TO {APP_ROLE}")
    op.execute(f"GRANT SELECT ON alembic_version TO {APP_ROLE}")
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON api_keys TO {APP_ROLE}")
    for table in TENANT_TABLES:
        op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {APP_ROLE}")
        op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        # No tenant set (NULL) matches nothing.
        op.execute(
            f"""
            CREATE POLICY tenant_isolation ON {table}
                USING (tenant_id = current_setting('app.tenant_id', true))
                WITH CHECK (tenant_id = current_setting('app.tenant_id', true))
            """
        )
    # pg_stats hides statistics of tables under row-level security; the keyword side's
    # IDF for common terms reads them through this owner-rights function. It returns
    # table-wide frequencies of the given lexemes only (ANALYZE's most common elements).
    op.execute(function_as_made("memory_common_lexemes"))
    op.execute("REVOKE ALL ON FUNCTION memory_common_lexemes(text[]) FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION memory_common_lexemes(text[]) TO {APP_ROLE}")
    # Under row-level security a query's non-leakproof operators (tsvector @@ tsquery among
    # them) may not run before the policy, so the GIN index cannot serve them: the keyword
    # side would scan the tenant's rows. This owner-rights function reads the index itself,
    # and enforces the tenant on its own: only rows of the transaction's app.tenant_id, and
    # none when it is unset.
    op.execute(function_as_made("memory_keyword_hits"))
    signature = "tsquery, integer, text, text[], text[], text[], real, boolean"
    op.execute(f"REVOKE ALL ON FUNCTION memory_keyword_hits({signature}) FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION memory_keyword_hits({signature}) TO {APP_ROLE}")


def downgrade() -> None:
    op.execute(LOCK_TIMEOUT)
    op.execute(
        "DROP FUNCTION memory_keyword_hits"
        "(tsquery, integer, text, text[], text[], text[], real, boolean)"
    )
    op.execute("DROP FUNCTION memory_common_lexemes(text[])")
    for table in TENANT_TABLES:
        op.execute(f"DROP POLICY tenant_isolation ON {table}")
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
        op.execute(f"REVOKE ALL ON {table} FROM {APP_ROLE}")
    op.execute(f"REVOKE ALL ON api_keys FROM {APP_ROLE}")
    op.execute(f"REVOKE ALL ON alembic_version FROM {APP_ROLE}")
    op.execute(f"REVOKE USAGE ON SCHEMA public FROM {APP_ROLE}")
    # The role itself is cluster-wide and may serve other databases: it stays.
