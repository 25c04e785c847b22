"""Idempotency-Key on the POSTs that create: a retry answers the first response and adds
nothing; the same key with another body is a 422; while the first is still running, 409.

Only an answer the body determines is kept for replay (2xx, 400, 422): a 401, 403, 409,
429 or 5xx releases the claim, so the retry runs again. A record belongs to the API key
that made it: another key of the tenant, with the same Idempotency-Key, is another request.
The caller is authenticated (and rate-counted) once; the route reuses the result.

Pure ASGI middleware: it claims the key in its own committed transaction (so a concurrent
retry sees the claim), runs the route, then stores the response (or releases the claim
after a 5xx, so the client may retry). When the database goes away mid-request the claim
can be neither stored nor released; this process remembers it as orphaned and lets the
client's retry take it over at once instead of answering 409 until the claim goes stale."""

from __future__ import annotations

import hashlib
import logging
import re
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.deps import get_principal
from app.api.errors import app_error_response
from app.db.session import unit_of_work
from app.domain.errors import AppError, InvalidInputError, StillRunningError
from app.repository.idempotency import IdempotencyRepository

CREATING_ROUTES = re.compile(
    r"^/(memories|memories/batch|memories/[^/]+/supersede|remember|strategies/learn|sessions)$"
)
MAX_KEY_CHARS = 200
# The answers a retry of the same body would get again, whoever asks and whenever.
REPLAYABLE = frozenset({400, 422})
STALE_AFTER_S = 60.0
MAX_ORPHANED = 10_000

logger = logging.getLogger("agent_memory.idempotency")


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # (tenant, key) claims this process made and could not finish; insertion-ordered
        # so the oldest is forgotten first (it then goes stale the normal way).
        self._orphaned: dict[tuple[str, str], None] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        key = Headers(scope=scope).get("idempotency-key")
        if key is None or not CREATING_ROUTES.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if not key.strip() or len(key) > MAX_KEY_CHARS:
            bad_key = InvalidInputError(
                f"Idempotency-Key must be 1 to {MAX_KEY_CHARS} characters", field="Idempotency-Key"
            )
            await (await app_error_response(request, bad_key))(scope, receive, send)
            return
        runtime = scope["app"].state.runtime
        try:
            principal = await get_principal(request, runtime)
        except AppError as exc:
            await (await app_error_response(request, exc))(scope, receive, send)
            return
        key = f"{principal.key_id or 'open'}:{key}"

        body = await _read_body(receive)
        request_hash = hashlib.sha256(scope["path"].encode() + b"\0" + body).hexdigest()
        try:
            async with unit_of_work(runtime.database, principal.tenant_id) as uow:
                existing = await IdempotencyRepository(uow).reserve(
                    key,
                    request_hash,
                    STALE_AFTER_S,
                    take_over=(principal.tenant_id, key) in self._orphaned,
                )
        except AppError as exc:
            await (await app_error_response(request, exc))(scope, receive, send)
            return
        if existing is not None:
            if existing.request_hash != request_hash:
                error: AppError = InvalidInputError(
                    "this Idempotency-Key was used with a different request",
                    field="Idempotency-Key",
                )
            elif existing.completed_at is None:
                error = StillRunningError(
                    "a request with this Idempotency-Key is still in progress"
                )
            else:
                await _replay(existing.status or 200, existing.response or b"", send)
                return
            await (await app_error_response(request, error))(scope, receive, send)
            return

        status, chunks = 500, []

        async def replay_body() -> Message:
            return {"type": "http.request", "body": body, "more_body": False}

        async def capture(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        claim = (principal.tenant_id, key)
        self._orphaned.pop(claim, None)
        try:
            await self.app(scope, replay_body, capture)
        finally:
            try:
                async with unit_of_work(runtime.database, principal.tenant_id) as uow:
                    records = IdempotencyRepository(uow)
                    if 200 <= status < 300 or status in REPLAYABLE:
                        await records.complete(key, status, b"".join(chunks))
                    else:
                        await records.release(key)
            except AppError:
                # The response is already sent; the retry will find the claim orphaned.
                logger.warning("could not record the outcome of an idempotent request")
                self._orphaned[claim] = None
                if len(self._orphaned) > MAX_ORPHANED:
                    del self._orphaned[next(iter(self._orphaned))]


async def _read_body(receive: Receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


async def _replay(status: int, body: bytes, send: Send) -> None:
    media = "application/problem+json" if status >= 400 else "application/json"
    headers: list[Any] = [
        (b"content-type", media.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"idempotent-replayed", b"true"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
