"""Prometheus: per-route request counts and latency, plus what the services count."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.deps import RuntimeDep

router = APIRouter(tags=["ops"])


@router.get("/metrics", include_in_schema=False)
async def metrics(runtime: RuntimeDep) -> Response:
    pool = runtime.database.pool
    gauge = runtime.telemetry
    gauge.pool_size.set(pool.get_size())
    gauge.pool_idle.set(pool.get_idle_size())
    gauge.pool_max.set(pool.get_max_size())
    return Response(generate_latest(runtime.telemetry.registry), media_type=CONTENT_TYPE_LATEST)


def _route_template(scope: Scope) -> str:
    """The matched route's path template (/memories/{memory_id}), set in the scope by the
    router; never the raw path, so ids do not explode the label set."""
    route = scope.get("route")
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    return str(path) if path else "unmatched"


class MetricsMiddleware:
    """Pure ASGI (no BaseHTTPMiddleware): measures every HTTP request by route template."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status_code = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status_code
            if message["type"] == "http.response.start":
                status_code = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            runtime = getattr(scope["app"].state, "runtime", None)
            if runtime is not None:
                route = _route_template(scope)
                method = Request(scope).method
                runtime.telemetry.requests.labels(route, method, str(status_code)).inc()
                runtime.telemetry.request_seconds.labels(route, method).observe(
                    time.perf_counter() - started
                )
