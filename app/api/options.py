"""OPTIONS on any route: 204 with the methods it allows (RFC 9110, section 9.3.7), without
authentication, since it reveals nothing the OpenAPI document does not."""

from __future__ import annotations

from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

CANDIDATES = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


class OptionsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await self.app(scope, receive, send)
            return
        routes = scope["app"].router.routes
        methods = {
            method
            for method in CANDIDATES
            if any(route.matches({**scope, "method": method})[0] == Match.FULL for route in routes)
        }
        if not methods:
            await self.app(scope, receive, send)  # 404 as for any unknown path
            return
        allow = ", ".join(sorted(methods | {"OPTIONS"}))
        await send(
            {
                "type": "http.response.start",
                "status": 204,
                "headers": [(b"allow", allow.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})
