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
from datetime import UTC, datetime
from uuid import UUID

from app.db.unit_of_work import Database
from app.domain.errors import RateLimitedError, UnauthorizedError
from app.domain.keys import KEY_PREFIX, hash_key
from app.domain.oauth import access_refusal, hash_secret, is_access_token
from app.domain.principal import OPEN_PRINCIPAL, Principal
from app.repository.keys import KeyRepository
from app.repository.oauth import OAuthRepository

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
    """Throttles what fails, never a valid key. Every key presented is looked up (one index
    probe: keys carry 256 random bits, so the throttle is about load and noise, not odds):
    a valid one always gets in, whatever other keys did from the same address. Past
    `max_failures` failures in `window_s`, an address's failing attempts answer 429 instead
    of 401, and a key that keeps failing (a revoked key an agent retries) answers 429
    without being looked up again. In this process; bounded in memory.

    The address is the direct peer unless TRUSTED_PROXIES names it (app/http_server.py):
    a forwarded header from anyone else is ignored, so rotating it buys nothing."""

    MAX_TRACKED = 10_000

    def __init__(self, max_failures: int, window_s: float) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self._failures: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def _count(self, who: str, now: float) -> tuple[float, int]:
        start, count = self._failures.get(who, (now, 0))
        return (now, 0) if now - start >= self.window_s else (start, count)

    def _refusal(self, who: str, now: float, what: str) -> RateLimitedError | None:
        start, count = self._count(who, now)
        if self.max_failures <= 0 or count < self.max_failures:
            return None
        retry = int(self.window_s - (now - start)) + 1
        return RateLimitedError(f"{what}; retry after {retry} s", retry_after_s=retry)

    def check_key(self, key_hash: str, now: float | None = None) -> None:
        """Before the lookup: a key that keeps failing is not looked up again."""
        now = time.monotonic() if now is None else now
        refusal = self._refusal(f"key:{key_hash}", now, "this key keeps failing")
        if refusal is not None:
            raise refusal

    def failed(
        self, address: str | None, key_hash: str, now: float | None = None
    ) -> RateLimitedError | None:
        """Count a failure; the 429 to answer instead of 401 when past the limit."""
        now = time.monotonic() if now is None else now
        for who in (f"key:{key_hash}", f"address:{address}" if address else None):
            if who is None or self.max_failures <= 0:
                continue
            start, count = self._count(who, now)
            self._failures[who] = (start, count + 1)
            self._failures.move_to_end(who)
        while len(self._failures) > self.MAX_TRACKED:
            self._failures.popitem(last=False)
        if address is None:
            return None
        return self._refusal(
            f"address:{address}", now, "too many failed authentications from this address"
        )


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

    async def authenticate(
        self, bearer: str | None, address: str | None = None, resource: str | None = None
    ) -> Principal:
        """`resource`: the OAuth resource the calling door is (/mcp's), where a bearer that
        is not an API key is a connected client's access token (app/services/oauth.py)."""
        if bearer is None:
            if self._open_mode:
                async with self._database.connection() as conn:
                    ever = await KeyRepository(conn).any_ever()
                if not ever:
                    return OPEN_PRINCIPAL
            raise UnauthorizedError(
                "an API key is required: send Authorization: Bearer <key> (the CLI and the"
                " hooks read AGENT_MEMORY_API_KEY, or the CLI's --api-key); an admin makes one"
                " with `agent-memory keys create --name you --role admin`"
            )
        if resource is not None and not bearer.startswith(KEY_PREFIX):
            return await self._access_token(bearer, address, resource)
        if is_access_token(bearer):
            raise UnauthorizedError(
                "an OAuth access token is good at /mcp only, where its client connected;"
                " the API and the console take API keys"
            )
        key_hash = hash_key(bearer)
        self._failures.check_key(key_hash)
        async with self._database.connection() as conn:
            key = await KeyRepository(conn).authenticate(key_hash)
        if key is None:
            too_many = self._failures.failed(address, key_hash)
            if too_many is not None:
                raise too_many
            raise UnauthorizedError("unknown or revoked API key")
        self._limiter.check(key.id)
        return Principal(key.tenant_id, key.role, key.id, key.person_id)

    async def _access_token(self, token: str, address: str | None, resource: str) -> Principal:
        """A connected client: its grant's tenant, role and person, while the token is
        unexpired, bound to `resource` and its grant stands. Failures count as a wrong key's."""
        token_hash = hash_secret(token)
        self._failures.check_key(token_hash)
        async with self._database.connection() as conn:
            found = await OAuthRepository(conn).token(token_hash, "access")
        refusal = access_refusal(found, resource, datetime.now(UTC))
        if refusal is not None or found is None:
            too_many = self._failures.failed(address, token_hash)
            if too_many is not None:
                raise too_many
            raise UnauthorizedError(refusal or "unknown access token")
        self._limiter.check(found.grant.id)
        return found.grant.principal


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
