"""What a running service holds: settings, database, embedder, telemetry."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.concurrency import CostFairAdmission
from app.config import Settings, admission_capacity, limits_of, tenant_request_share
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
    # Requests in flight per tenant (see Settings.tenant_max_requests).
    admission: CostFairAdmission = field(init=False)

    def __post_init__(self) -> None:
        s = self.settings
        self.admission = CostFairAdmission(
            admission_capacity(s), tenant_request_share(s), s.admission_half_life_s
        )

    @property
    def limits(self) -> Limits:
        return limits_of(self.settings)
