"""bound what lower trust can change, and make the audit log append-only: a memory remembers
that an admin archived it by hand (an agent's re-store no longer brings it back); the app
role may only insert and read audit entries (no UPDATE or DELETE, row security forced),
retention deletes by age through an owner's function, and an undo is found by the entry
that records it (indexed) instead of a mark written into the entry it undid

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APP_ROLE = "agent_memory_app"

# The only way audit entries leave: by age, for the tenant of the transaction, never fewer
# than 30 days old (a compromised app role cannot erase what it just did). SECURITY
# DEFINER: it runs as the owner, whom the forced row security still holds to the tenant.
FORGET = """
CREATE FUNCTION public.audit_log_forget(days integer) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path TO 'pg_catalog', 'public'
AS $function$
    WITH gone AS (
        DELETE FROM public.audit_log
        WHERE tenant_id = current_setting('app.tenant_id', true)
          AND at < now() - make_interval(days => greatest(days, 30))
        RETURNING 1
    )
    SELECT count(*) FROM gone
$function$
"""


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute("ALTER TABLE memories ADD COLUMN archived_by_admin boolean NOT NULL DEFAULT false")
    op.execute(f"REVOKE UPDATE, DELETE, TRUNCATE ON audit_log FROM {APP_ROLE}")
    op.execute("ALTER TABLE audit_log FORCE ROW LEVEL SECURITY")
    op.execute(FORGET)
    op.execute("REVOKE ALL ON FUNCTION public.audit_log_forget(integer) FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION public.audit_log_forget(integer) TO {APP_ROLE}")
    op.execute(
        "CREATE INDEX audit_log_undo_key ON audit_log (tenant_id, ((detail->>'undid')))"
        " WHERE action = 'undo'"
    )


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute("DROP INDEX audit_log_undo_key")
    op.execute("DROP FUNCTION public.audit_log_forget(integer)")
    op.execute("ALTER TABLE audit_log NO FORCE ROW LEVEL SECURITY")
    op.execute(f"GRANT UPDATE, DELETE ON audit_log TO {APP_ROLE}")
    # What 0031 found by the undo's own entry is written back into the entries it undid.
    op.execute(
        """
        UPDATE audit_log a SET undone_by = u.id
        FROM audit_log u
        WHERE u.tenant_id = a.tenant_id AND u.action = 'undo'
          AND u.detail->>'undid' = a.id::text AND a.undone_by IS NULL
        """
    )
    op.execute("ALTER TABLE memories DROP COLUMN archived_by_admin")
