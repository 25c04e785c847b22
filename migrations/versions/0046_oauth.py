"""remote MCP over OAuth 2.1: the clients that registered, the authorization requests waiting
for a person's consent, the grants a person made (the rotation family of every token), the
authorization codes and the access and refresh tokens, each code and token kept only as a
hash

Every table is read by a hash (a request's, a code's, a token's) or a client id before the
tenant is known, like api_keys: a reference table on Citus (a copy on every node). A grant
names its tenant, its person (NULL: a key of no one), the key that approved it, its client,
its role (agent or reader: never admin) and the resource its tokens are bound to (RFC 8707);
revoking it revokes every code and token issued under it. An audit entry names a connected
client's actions by the grant's id (audit_log.actor_key).

Revision ID: 0046
Revises: 0045
Create Date: 2026-12-07
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0046"
down_revision: str | None = "0045"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained: a migration imports no app code, which may change after it shipped.
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"
APP_ROLE = "agent_memory_app"

# In the order they are made (each refers only to those before it, or to people and
# api_keys); dropped in the reverse order.
TABLES = {
    "oauth_clients": """
        id          text        PRIMARY KEY,  -- the client_id this server issued (RFC 7591)
        secret_hash text,                     -- NULL: a public client (PKCE alone)
        metadata    jsonb       NOT NULL,     -- as registered, without the secret
        created_at  timestamptz NOT NULL DEFAULT now()
    """,
    "oauth_requests": """
        request_hash          text        PRIMARY KEY,  -- of the consent page's address
        client_id             text        NOT NULL,
        client_name           text        NOT NULL,
        redirect_uri          text        NOT NULL,
        redirect_uri_explicit boolean     NOT NULL,
        code_challenge        text        NOT NULL,  -- PKCE S256
        state                 text,
        scopes                text[]      NOT NULL DEFAULT '{}',
        resource              text        NOT NULL,
        expires_at            timestamptz NOT NULL
    """,
    "oauth_grants": """
        id             uuid        PRIMARY KEY DEFAULT uuidv7(),
        tenant_id      text        NOT NULL,
        person_id      uuid,
        granted_by_key uuid        NOT NULL,
        client_id      text        NOT NULL,
        client_name    text        NOT NULL,
        redirect_uri   text        NOT NULL,
        role           text        NOT NULL CHECK (role IN ('agent', 'reader')),
        resource       text        NOT NULL,
        scopes         text[]      NOT NULL DEFAULT '{}',
        created_at     timestamptz NOT NULL DEFAULT now(),
        revoked_at     timestamptz,
        FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id),
        FOREIGN KEY (tenant_id, granted_by_key) REFERENCES api_keys (tenant_id, id)
    """,
    "oauth_codes": """
        code_hash             text        PRIMARY KEY,
        grant_id              uuid        NOT NULL REFERENCES oauth_grants (id),
        client_id             text        NOT NULL,
        redirect_uri          text        NOT NULL,
        redirect_uri_explicit boolean     NOT NULL,
        code_challenge        text        NOT NULL,
        expires_at            timestamptz NOT NULL,
        used_at               timestamptz  -- a second use revokes the grant
    """,
    "oauth_tokens": """
        token_hash text        PRIMARY KEY,
        grant_id   uuid        NOT NULL REFERENCES oauth_grants (id),
        kind       text        NOT NULL CHECK (kind IN ('access', 'refresh')),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        rotated_at timestamptz  -- a refresh token once exchanged; a second use revokes the grant
    """,
}
INDEXES = (
    # The console lists a tenant's grants, and a person's; a removed person's are revoked.
    "CREATE INDEX oauth_grants_tenant_key ON oauth_grants (tenant_id, person_id, created_at)",
    "CREATE INDEX oauth_codes_grant_key ON oauth_codes (grant_id)",
    "CREATE INDEX oauth_tokens_grant_key ON oauth_tokens (grant_id)",
    # What the schedule deletes once expired.
    "CREATE INDEX oauth_requests_expiry_key ON oauth_requests (expires_at)",
    "CREATE INDEX oauth_codes_expiry_key ON oauth_codes (expires_at)",
    "CREATE INDEX oauth_tokens_expiry_key ON oauth_tokens (expires_at)",
)


def on_citus() -> bool:
    return bool(op.get_bind().exec_driver_sql(CITUS_INSTALLED).scalar())


def begin() -> None:
    """A lock timeout; on Citus one connection per node (reference tables that refer to
    each other, made in one transaction)."""
    op.execute("SET LOCAL lock_timeout = '5s'")
    if on_citus():
        op.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


def upgrade() -> None:
    begin()
    citus = on_citus()
    for table, columns in TABLES.items():
        op.execute(f"CREATE TABLE {table} ({columns})")
        op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {APP_ROLE}")
        if citus:
            op.execute(f"SELECT create_reference_table('{table}')")
    for index in INDEXES:
        op.execute(index)


def downgrade() -> None:
    begin()
    for table in reversed(TABLES):
        op.execute(f"DROP TABLE {table}")
