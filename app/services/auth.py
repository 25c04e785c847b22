"""Who is calling: a key's tenant and role, or the open local mode when no key exists."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from uuid import UUID

from app.db.session import Database
from app.domain.errors import (
    ForbiddenError,
    RateLimitedError,
    UnauthorizedError,
)
from app.domain.keys import CAPABILITIES, TRUST_ALLOWED, hash_key
from app.domain.memory import DEFAULT_TENANT
from app.repository.keys import KeyRepository

logger = logging.getLogger("agent_memory.auth")


@dataclass(frozen=True, slots=True)
class Principal:
    tenant_id: str
    role: str
    key_id: UUID | None  # None in open mode

    def can(self, capability: str) -> bool:
        return self.role in CAPABILITIES[capability]

    def require(self, capability: str) -> None:
        if not self.can(capability):
            raise ForbiddenError(f"a {self.role} key may not do this ({capability})")

    def require_trust(self, trust_level: str) -> None:
        if trust_level not in TRUST_ALLOWED[self.role]:
            raise ForbiddenError(
                f"a {self.role} key may not write trust_level '{trust_level}'", field="trust_level"
            )


OPEN_PRINCIPAL = Principal(DEFAULT_TENANT, "admin", None)


def system_principal(tenant_id: str) -> Principal:
    """The service acting on its own schedule (pruning, backfill) for a tenant."""
    return Principal(tenant_id, "admin", None)


class RateLimiter:
    """Requests per key per minute, fixed windows, in this process."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._windows: dict[UUID, tuple[int, int]] = {}

    def check(self, key_id: UUID, now: float | None = None) -> None:
        if self.per_minute <= 0:
            return
        now = time.time() if now is None else now
        window = int(now // 60)
        start, count = self._windows.get(key_id, (window, 0))
        if start != window:
            start, count = window, 0
        if count >= self.per_minute:
            raise RateLimitedError(
                f"more than {self.per_minute} requests this minute for this key",
                retry_after_s=60 - int(now % 60),
            )
        self._windows[key_id] = (start, count + 1)


class Authenticator:
    def __init__(self, database: Database, limiter: RateLimiter) -> None:
        self._database = database
        self._limiter = limiter

    async def authenticate(self, bearer: str | None) -> Principal:
        async with self._database.connection() as conn:
            keys = KeyRepository(conn)
            if bearer is None:
                if await keys.any_active():
                    raise UnauthorizedError("an API key is required: Authorization: Bearer <key>")
                return OPEN_PRINCIPAL
            key = await keys.authenticate(hash_key(bearer))
        if key is None:
            raise UnauthorizedError("unknown or revoked API key")
        self._limiter.check(key.id)
        return Principal(key.tenant_id, key.role, key.id)
