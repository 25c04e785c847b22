"""A request body larger than MAX_BODY_BYTES is refused with 413 while it is read, before
anything parses it: for every route, /mcp included. A declared Content-Length over the
limit is refused before reading a byte; a chunked body, as soon as it passes the limit.

The body is read here (at most the limit is ever held) and handed on whole: a parser
downstream turns an error raised from its `receive` into a 400, not a 413."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import app_error_response
from app.domain.errors import PayloadTooLargeError


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int, streamed: frozenset[str]) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # Routes that read their body as a stream and bound it themselves (an import).
        self.streamed = streamed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] in ("GET", "HEAD", "OPTIONS")
            or scope["path"] in self.streamed
        ):
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            part = message.get("body", b"")
            size += len(part)
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            parts.append(part)
            if not message.get("more_body", False):
                break
        body = b"".join(parts)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:  # the body is spent: what follows is the client going away
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        error = PayloadTooLargeError(
            f"the request body is larger than {self.max_bytes} bytes", field="body"
        )
        response = await app_error_response(Request(scope), error)
        response.headers["Connection"] = "close"
        await response(scope, receive, send)
