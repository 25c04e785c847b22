"""What a running service holds: settings, database, embedder, telemetry."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.concurrency import TenantShares
from app.config import Settings, limits_of, tenant_request_share
from app.db.prewarm import Warmth
from app.db.unit_of_work import Database
from app.domain.principal import Authenticates
from app.domain.validation import Limits
from app.embeddings.base import Embedder
from app.telemetry import Telemetry


@dataclass(slots=True)
class Runtime:
    settings: Settings
    database: Database
    embedder: Embedder
    telemetry: Telemetry
    schema_head: str
    authenticator: Authenticates
    # The login the pool connects as before SET ROLE, for the schedule's work as the
    # table's owner (repositories' graphs); None when it connects as the service's role.
    owner_url: str | None = None
    # Whether the database has read its buffers back after a start (/readyz waits for it).
    warmth: Warmth = field(default_factory=Warmth)
    # Requests in flight per tenant (see Settings.tenant_max_requests).
    admission: TenantShares = field(init=False)
    # The team's identity provider for console sign-in (OIDC_ISSUER; app/services/oidc.py's
    # IdentityProvider, made at start: a runtime imports no service), or None: keys only.
    identity_provider: object | None = None

    def __post_init__(self) -> None:
        self.admission = TenantShares(
            tenant_request_share(self.settings), self.settings.tenant_backlog_duty
        )

    @property
    def limits(self) -> Limits:
        return limits_of(self.settings)
