"""Who is calling: a key's tenant and role, or the open local mode decided at start.

Open mode (no key needed, every caller the default tenant's admin) is decided once, when
the service starts: only when no key has ever existed (revoked keys count) and the bind
is loopback (or ALLOW_OPEN_NETWORK), and never with REQUIRE_KEYS. While open, the first
key created anywhere closes it; nothing opens it again. Keys are revoked, never deleted,
so revoking every key leaves a closed service, not an open one (docs/security.md).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from uuid import UUID

from app.db.unit_of_work import Database
from app.domain.errors import RateLimitedError, UnauthorizedError
from app.domain.keys import hash_key
from app.domain.principal import OPEN_PRINCIPAL, Principal
from app.repository.keys import KeyRepository

logger = logging.getLogger("agent_memory.auth")

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


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


class FailedAuthLimiter:
    """Failed authentications per client address: past `max_failures` in `window_s`, that
    address's unknown keys are refused (429) without being looked up until the window ends.
    A key that authenticated lately (from anywhere) still passes, so the holder of a valid
    key behind the same address is not locked out. In this process; bounded in memory."""

    MAX_TRACKED = 10_000

    def __init__(self, max_failures: int, window_s: float) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self._failures: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._verified: OrderedDict[str, float] = OrderedDict()

    def _window(self, address: str, now: float) -> tuple[float, int]:
        start, count = self._failures.get(address, (now, 0))
        return (now, 0) if now - start >= self.window_s else (start, count)

    def check(self, address: str | None, key_hash: str | None, now: float | None = None) -> None:
        if address is None or self.max_failures <= 0:
            return
        now = time.monotonic() if now is None else now
        if key_hash is not None:
            seen = self._verified.get(key_hash)
            if seen is not None and now - seen < self.window_s:
                return
        start, count = self._window(address, now)
        if count >= self.max_failures:
            raise RateLimitedError(
                f"too many failed authentications from this address; retry after"
                f" {int(self.window_s - (now - start)) + 1} s",
                retry_after_s=int(self.window_s - (now - start)) + 1,
            )

    def failed(self, address: str | None, now: float | None = None) -> None:
        if address is None or self.max_failures <= 0:
            return
        now = time.monotonic() if now is None else now
        start, count = self._window(address, now)
        self._failures[address] = (start, count + 1)
        self._failures.move_to_end(address)
        while len(self._failures) > self.MAX_TRACKED:
            self._failures.popitem(last=False)

    def verified(self, key_hash: str, now: float | None = None) -> None:
        self._verified[key_hash] = time.monotonic() if now is None else now
        self._verified.move_to_end(key_hash)
        while len(self._verified) > self.MAX_TRACKED:
            self._verified.popitem(last=False)


class Authenticator:
    def __init__(
        self,
        database: Database,
        limiter: RateLimiter,
        failures: FailedAuthLimiter,
        open_mode: bool,
    ) -> None:
        self._database = database
        self._limiter = limiter
        self._failures = failures
        self._open_mode = open_mode

    @property
    def open_mode(self) -> bool:
        """Decided at start; a key created since closes it for good (see the module)."""
        return self._open_mode

    async def authenticate(self, bearer: str | None, address: str | None = None) -> Principal:
        if bearer is None:
            if self._open_mode:
                async with self._database.connection() as conn:
                    ever = await KeyRepository(conn).any_ever()
                if not ever:
                    return OPEN_PRINCIPAL
            raise UnauthorizedError("an API key is required: Authorization: Bearer <key>")
        key_hash = hash_key(bearer)
        self._failures.check(address, key_hash)
        async with self._database.connection() as conn:
            key = await KeyRepository(conn).authenticate(key_hash)
        if key is None:
            self._failures.failed(address)
            raise UnauthorizedError("unknown or revoked API key")
        self._failures.verified(key_hash)
        self._limiter.check(key.id)
        return Principal(key.tenant_id, key.role, key.id)


async def decide_open_mode(
    database: Database, host: str, require_keys: bool, allow_open_network: bool
) -> bool:
    """Open only when no key has ever existed, on loopback (or ALLOW_OPEN_NETWORK), and
    REQUIRE_KEYS is off. Said once in the log, so that an operator sees which it is."""
    async with database.connection() as conn:
        ever = await KeyRepository(conn).any_ever()
    open_mode = not require_keys and not ever and (is_loopback(host) or allow_open_network)
    if open_mode:
        logger.warning(
            "no API key has ever been created: running OPEN on %s, every caller is admin of"
            " the default tenant until the first key is created"
            " (`agent-memory keys create --name ...`)",
            host,
        )
    else:
        logger.info("API keys required")
    return open_mode
