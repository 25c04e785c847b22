"""Every door's first check (REST, /mcp, the console): the Host is one this service answers
for, and a state-changing request is not a browser's on another site's behalf
(app/domain/origins.py has the rules and why). The probes answer any Host: an orchestrator
names the service by its address, and they hold no tenant's data."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import app_error_response
from app.domain.errors import AppError
from app.domain.origins import check_host, check_origin

PROBES = frozenset({"/healthz", "/readyz", "/metrics"})


class RequestGuardMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        allowed_hosts: frozenset[str] | None,
        allowed_origins: frozenset[str],
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = allowed_origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            if scope["path"] not in PROBES:
                check_host(headers.get("host"), self.allowed_hosts)
            check_origin(
                scope["method"],
                headers.get("origin"),
                headers.get("sec-fetch-site"),
                headers.get("host"),
                self.allowed_origins,
            )
        except AppError as refusal:
            response = await app_error_response(Request(scope), refusal)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
