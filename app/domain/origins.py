"""Which requests a browser may have sent on another site's behalf, and which names this
service answers to: the rules behind app/api/request_guard.py.

A web page can make the developer's browser send a request to 127.0.0.1 (a form, a
`text/plain` fetch: no preflight), and DNS rebinding can make it do so under the page's own
host name, reading the answers. In open mode that is everything. So the service answers
only to the host names it is configured for (loopback names by default), and refuses any
state-changing request that a browser marks as coming from another origin. Clients that are
not browsers (agents, the CLI, curl) send no Origin and pass.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from app.domain.errors import ForbiddenError, MisdirectedRequestError

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Sec-Fetch-Site values a browser sends for a request another site's page made.
_CROSS_SITE = frozenset({"cross-site", "same-site"})


def host_name(host_header: str) -> str:
    """The name in a Host header, without its port and brackets, lower case."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    name, _, port = host.rpartition(":")
    return name if name and port.isdigit() else host


def allowed_hosts(configured: str, bind_host: str, public_url: str = "") -> frozenset[str] | None:
    """ALLOWED_HOSTS as a set of names (None: any, for `*`); by default the loopback names
    and the address the service is bound to, when that is one address. PUBLIC_URL's host is
    always one: clients are told to reach the service there."""
    names = {name.strip().lower() for name in configured.split(",") if name.strip()}
    if "*" in names:
        return None
    if not names:
        names = set(LOOPBACK_HOSTS)
        if bind_host not in ("0.0.0.0", "::", ""):
            names.add(host_name(bind_host))
    if public_url:
        names.add((urlsplit(public_url).hostname or "").lower())
    return frozenset(names)


def check_host(host_header: str | None, allowed: frozenset[str] | None) -> None:
    if allowed is None:
        return
    name = host_name(host_header or "")
    if name not in allowed and not (name.endswith(".localhost") and "localhost" in allowed):
        raise MisdirectedRequestError(
            f"this service does not answer for the host {name[:100]!r}: add it to"
            " ALLOWED_HOSTS if it is this service's name",
            field="Host",
        )


def origin_of(url: str) -> str:
    """scheme://host[:port] of an Origin or a configured origin, lower case."""
    parts = urlsplit(url.strip().lower())
    return f"{parts.scheme}://{parts.netloc}"


def check_origin(
    method: str,
    origin: str | None,
    fetch_site: str | None,
    host_header: str | None,
    allowed_origins: frozenset[str],
) -> None:
    """A state-changing request from a browser must come from this service's own pages (or
    an origin ALLOWED_ORIGINS names); one a browser marks as another site's is refused."""
    if method.upper() in SAFE_METHODS:
        return
    # A browser vouches for this itself (a script cannot set Sec-Fetch-*); the console's
    # no-referrer policy makes Chromium send `Origin: null` on its own forms.
    if (fetch_site or "").lower() == "same-origin":
        return
    if origin is not None:
        if origin == "null":
            raise ForbiddenError("a request from an opaque origin may not change anything")
        parts = urlsplit(origin.strip().lower())
        if parts.netloc == (host_header or "").strip().lower() or origin_of(origin) in (
            allowed_origins
        ):
            return
        raise ForbiddenError(
            f"a request from the origin {origin[:100]!r} may not change anything here: add it"
            " to ALLOWED_ORIGINS if it is a page of yours",
            field="Origin",
        )
    if (fetch_site or "").lower() in _CROSS_SITE:
        raise ForbiddenError("a request another site's page sent may not change anything")
