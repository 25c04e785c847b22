"""people: a person owns keys, and every memory, draft and audit entry names its person; a
memory (or a draft) may be personal, reaching only its person's keys

- people: a tenant's people, looked up beside a key before the tenant is known (a reference
  table on Citus, like api_keys). A person removed stays as a name that memories and audit
  entries still point at (removed_at); a name is unique among the present.
- api_keys.person_id: whom a key acts for (NULL: a key of no one, as before).
- memories.person_id, drafts.person_id, audit_log.actor_person: who wrote, queued or acted.
- memories.personal, drafts.personal: the writer asked that it reach only its person;
  personal_to (memories and drafts: generated from the two; audit_log: the entry is about
  such a memory) is the one person a row reaches (NULL: the team's). Each table's row policy
  (tenant_isolation) takes the person beside the tenant: such a row is hidden from every
  transaction but its person's (app.person_id), whatever a statement asks; work the service
  does on its own (pruning, embedding) sets app.every_person. One permissive policy, not a
  restrictive second one: Citus copies a policy to the shards without AS RESTRICTIVE, and a
  second permissive policy would let through every row the first refuses. The dedup key takes
  personal_to, so that two people's identical personal notes are two memories, and a team
  memory is never merged into someone's personal one.

A downgrade deletes the personal memories and drafts (the revision before cannot keep them
from other people) and the audit entries about them.

Revision ID: 0045
Revises: 0044
Create Date: 2026-12-07
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0045"
down_revision: str | None = "0044"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
APP_ROLE = "agent_memory_app"
PERSONAL_TABLES = ("memories", "drafts", "audit_log")
TENANT = "tenant_id = current_setting('app.tenant_id', true)"
# A row's person, or every person for the service's own work; an unset person sees no
# personal row at all.
REACHES = (
    "personal_to IS NULL"
    " OR personal_to = nullif(current_setting('app.person_id', true), '')::uuid"
    " OR current_setting('app.every_person', true) = 'on'"
)


def tenant_isolation(table: str, using: str) -> None:
    op.execute(f"DROP POLICY tenant_isolation ON {table}")
    op.execute(f"CREATE POLICY tenant_isolation ON {table} USING ({using}) WITH CHECK ({using})")


def on_citus() -> bool:
    return bool(op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar())


def begin() -> None:
    """A lock timeout; on Citus one connection per node (DDL on distributed tables beside
    a reference table's in one transaction)."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if on_citus():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


def dedup_key(columns: str) -> None:
    op.execute(
        f"CREATE UNIQUE INDEX memories_dedup_key_new ON memories ({columns}) NULLS NOT DISTINCT"
    )
    op.execute("DROP INDEX memories_dedup_key")
    op.execute("ALTER INDEX memories_dedup_key_new RENAME TO memories_dedup_key")


def upgrade() -> None:
    begin()
    op.execute(
        """
        CREATE TABLE people (
            tenant_id  text        NOT NULL,
            id         uuid        NOT NULL DEFAULT uuidv7(),
            name       text        NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            removed_at timestamptz,
            PRIMARY KEY (tenant_id, id)
        )
        """
    )
    op.execute(
        "CREATE UNIQUE INDEX people_name_key ON people (tenant_id, name) WHERE removed_at IS NULL"
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON people TO {APP_ROLE}")
    if on_citus():
        op.execute("SELECT create_reference_table('people')")
    # One subcommand a constraint: Citus takes no ADD CONSTRAINT beside another.
    op.execute("ALTER TABLE api_keys ADD COLUMN person_id uuid")
    op.execute(
        "ALTER TABLE api_keys"
        " ADD FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id)"
    )
    for table in ("memories", "drafts"):
        op.execute(
            f"ALTER TABLE {table} ADD COLUMN person_id uuid,"
            " ADD COLUMN personal boolean NOT NULL DEFAULT false,"
            " ADD COLUMN personal_to uuid"
            " GENERATED ALWAYS AS (CASE WHEN personal THEN person_id END) STORED"
        )
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_personal_has_a_person"
            " CHECK (NOT personal OR person_id IS NOT NULL)"
        )
    op.execute("ALTER TABLE audit_log ADD COLUMN actor_person uuid, ADD COLUMN personal_to uuid")
    # Same lookup as before (content_hash leads: migration 0011), one person's at a time.
    dedup_key("tenant_id, content_hash, source_repo, personal_to")
    for table in PERSONAL_TABLES:
        tenant_isolation(table, f"{TENANT} AND ({REACHES})")


def downgrade() -> None:
    begin()
    for table in PERSONAL_TABLES:
        tenant_isolation(table, TENANT)
    # Row security is forced on the owner too; these deletes are the owner's, of every
    # tenant (the audit log's retention floor does not apply to the owner).
    for table in PERSONAL_TABLES:
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    op.execute("DELETE FROM audit_log WHERE personal_to IS NOT NULL")
    op.execute("DELETE FROM drafts WHERE personal_to IS NOT NULL")
    op.execute("DELETE FROM memories WHERE personal_to IS NOT NULL")
    for table in PERSONAL_TABLES:
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    dedup_key("tenant_id, content_hash, source_repo")
    op.execute("ALTER TABLE audit_log DROP COLUMN actor_person, DROP COLUMN personal_to")
    for table in ("drafts", "memories"):
        op.execute(
            f"ALTER TABLE {table} DROP COLUMN personal_to, DROP COLUMN personal,"
            " DROP COLUMN person_id"
        )
    op.execute("ALTER TABLE api_keys DROP COLUMN person_id")
    op.execute("DROP TABLE people")
