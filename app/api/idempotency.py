"""Idempotency-Key on the POSTs that create, as pure ASGI middleware: it reads the key and
the body, asks the policy (app/services/idempotency.py) for a claim or a replay, runs the
route, and hands the policy its answer. The caller is authenticated (and rate-counted)
once; the route reuses the result."""

from __future__ import annotations

import re
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.deps import get_principal
from app.api.errors import app_error_response
from app.domain.errors import AppError
from app.services.idempotency import Idempotency

CREATING_ROUTES = re.compile(
    r"^/(memories|memories/batch|memories/[^/]+/supersede|remember|strategies/learn|sessions)$"
)


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._policy = Idempotency()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        key = Headers(scope=scope).get("idempotency-key")
        if key is None or not CREATING_ROUTES.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        runtime = scope["app"].state.runtime
        try:
            self._policy.check_key(key)
            principal = await get_principal(request, runtime)
            body = await _read_body(receive)
            claimed, replay = await self._policy.claim(
                runtime.database, principal, key, scope["path"], body
            )
        except AppError as exc:
            await (await app_error_response(request, exc))(scope, receive, send)
            return
        if replay is not None:
            await _replay(replay.status, replay.body, send)
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

        try:
            await self.app(scope, replay_body, capture)
        finally:
            await self._policy.finish(
                runtime.database, principal, claimed, status, b"".join(chunks)
            )


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
