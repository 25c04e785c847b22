"""The HTTP server's connection rules: no connection is held for free.

uvicorn closes idle keep-alive connections (HTTP_KEEPALIVE_TIMEOUT_S) but waits forever for
a request that never comes, or comes a byte at a time. Its protocol is extended here:

- a connection must deliver a request's headers within HTTP_HEADER_TIMEOUT_S of opening
  (or of its previous response): a connection that sends nothing is closed;
- a body must arrive at HTTP_MIN_BODY_RATE bytes a second after a grace of
  HTTP_BODY_GRACE_S (its Content-Length sets its deadline; while the application has
  paused reading, the clock waits): one byte a second is closed;
- at most HTTP_MAX_CONNECTIONS_PER_CLIENT connections per client address and
  HTTP_MAX_CONNECTIONS in all (by default below the process's file-descriptor limit):
  past that a connection is answered 503 with Retry-After and closed at once.

A closed slow request gets 408 when no response has started.
"""

from __future__ import annotations

import asyncio
import resource
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.config import Settings

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\n"
    b"connection: close\r\n\r\n"
)
_TOO_SLOW = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


def connection_limit(settings: Settings) -> int:
    """HTTP_MAX_CONNECTIONS, or what the descriptor limit leaves room for (the pool, the
    model and the log need some)."""
    if settings.http_max_connections:
        return settings.http_max_connections
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(16, min(4096, soft - 128))


@dataclass
class ConnectionGuard:
    """The rules and the counts, shared by every connection of one server."""

    header_timeout_s: float
    body_grace_s: float
    min_body_rate: float
    per_client: int
    total: int
    open: Counter[str] = field(default_factory=Counter)

    def admit(self, client: str) -> bool:
        if self.open.total() >= self.total or self.open[client] >= self.per_client:
            return False
        self.open[client] += 1
        return True

    def leave(self, client: str) -> None:
        self.open[client] -= 1
        if self.open[client] <= 0:
            del self.open[client]


class GuardedProtocol(HttpToolsProtocol):
    guard: ConnectionGuard  # set on the subclass `protocol_for` makes

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._address = self.client[0] if self.client else "unknown"
        self._admitted = self.guard.admit(self._address)
        self._deadline: asyncio.TimerHandle | None = None
        if not self._admitted:
            transport.write(_BUSY)
            transport.close()
            return
        self._arm(self.guard.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if getattr(self, "_admitted", False):
            self._admitted = False
            self.guard.leave(self._address)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and (self.cycle is None or self.cycle.response_complete):
            # The first bytes of the next request on a kept-alive connection.
            self._arm(self.guard.header_timeout_s)
        super().data_received(data)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        length = 0
        for name, value in self.headers:
            if name == b"content-length" and value.isdigit():
                length = int(value)
        self._arm(self.guard.body_grace_s + length / self.guard.min_body_rate)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if getattr(self, "_deadline", None) is not None:
            assert self._deadline is not None
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.flow is not None and self.flow.read_paused:
            # The application has not read what came: the client is not the slow one.
            self._arm(self.guard.body_grace_s)
            return
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(_TOO_SLOW)
        self.transport.close()


def protocol_for(settings: Settings) -> type[GuardedProtocol]:
    guard = ConnectionGuard(
        header_timeout_s=settings.http_header_timeout_s,
        body_grace_s=settings.http_body_grace_s,
        min_body_rate=settings.http_min_body_rate,
        per_client=settings.http_max_connections_per_client,
        total=connection_limit(settings),
    )
    return type("ServerProtocol", (GuardedProtocol,), {"guard": guard})


def server_config(
    app: Any, settings: Settings, host: str, port: int, **extra: Any
) -> uvicorn.Config:
    """uvicorn as the service runs it: the guarded protocol, the idle keep-alive bound."""
    # The client's address (failed-auth throttling, per-client connection caps) is the
    # direct peer, unless that peer is a proxy TRUSTED_PROXIES names: only then does
    # X-Forwarded-For count. (uvicorn's own default trusts it from 127.0.0.1, where any
    # local process could rotate it.)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        proxy_headers=bool(settings.trusted_proxies.strip()),
        forwarded_allow_ips=settings.trusted_proxies.strip() or None,
        http=protocol_for(settings),
        timeout_keep_alive=int(settings.http_keepalive_timeout_s),
        log_config=None,
        access_log=False,
        **extra,
    )
