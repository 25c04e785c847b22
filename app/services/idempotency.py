"""Idempotency-Key policy: a retry answers the first response and adds nothing; the same key
with another body is a 422; while the first is still running, 409.

Only an answer the body determines is kept for replay (2xx, 400, 422): a 401, 403, 409,
429 or 5xx releases the claim, so the retry runs again. A record belongs to the API key
that made it: another key of the tenant, with the same Idempotency-Key, is another request.
A claim is made in its own committed transaction (so a concurrent retry sees it). When the
database goes away mid-request the claim can be neither stored nor released; this process
remembers it as orphaned and lets the client's retry take it over at once instead of
answering 409 until the claim goes stale."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from app.db.unit_of_work import Database, unit_of_work
from app.domain.errors import AppError, InvalidInputError, StillRunningError
from app.domain.principal import Principal
from app.repository.idempotency import IdempotencyRepository

MAX_KEY_CHARS = 200
# The answers a retry of the same body would get again, whoever asks and whenever.
REPLAYABLE = frozenset({400, 422})
STALE_AFTER_S = 60.0
MAX_ORPHANED = 10_000

logger = logging.getLogger("agent_memory.idempotency")


@dataclass(frozen=True, slots=True)
class Replay:
    status: int
    body: bytes


class Idempotency:
    """One per process: the claims it could not finish are its own to take over."""

    def __init__(self) -> None:
        # (tenant, key) claims this process made and could not finish; insertion-ordered
        # so the oldest is forgotten first (it then goes stale the normal way).
        self._orphaned: dict[tuple[str, str], None] = {}

    @staticmethod
    def check_key(key: str) -> None:
        if not key.strip() or len(key) > MAX_KEY_CHARS:
            raise InvalidInputError(
                f"Idempotency-Key must be 1 to {MAX_KEY_CHARS} characters",
                field="Idempotency-Key",
            )

    async def claim(
        self, database: Database, principal: Principal, key: str, path: str, body: bytes
    ) -> tuple[str, Replay | None]:
        """The claim's key, and the first answer to replay (None: run the request now).
        Raises the refusal for another body (422) or a request still running (409)."""
        claimed = f"{principal.key_id or 'open'}:{key}"
        request_hash = hashlib.sha256(path.encode() + b"\0" + body).hexdigest()
        async with unit_of_work(database, principal.tenant_id) as uow:
            existing = await IdempotencyRepository(uow).reserve(
                claimed,
                request_hash,
                STALE_AFTER_S,
                take_over=(principal.tenant_id, claimed) in self._orphaned,
            )
        self._orphaned.pop((principal.tenant_id, claimed), None)
        if existing is None:
            return claimed, None
        if existing.request_hash != request_hash:
            raise InvalidInputError(
                "this Idempotency-Key was used with a different request", field="Idempotency-Key"
            )
        if existing.completed_at is None:
            raise StillRunningError("a request with this Idempotency-Key is still in progress")
        return claimed, Replay(existing.status or 200, existing.response or b"")

    async def finish(
        self, database: Database, principal: Principal, claimed: str, status: int, body: bytes
    ) -> None:
        """Keep a replayable answer, or release the claim; never raises (the response is
        already sent: a claim that cannot be finished is remembered as orphaned)."""
        try:
            async with unit_of_work(database, principal.tenant_id) as uow:
                records = IdempotencyRepository(uow)
                if 200 <= status < 300 or status in REPLAYABLE:
                    await records.complete(claimed, status, body)
                else:
                    await records.release(claimed)
        except AppError:
            logger.warning("could not record the outcome of an idempotent request")
            self._orphaned[(principal.tenant_id, claimed)] = None
            if len(self._orphaned) > MAX_ORPHANED:
                del self._orphaned[next(iter(self._orphaned))]
