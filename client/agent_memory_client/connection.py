"""The server, as the hooks and the bridge reach it: one HTTP/1.1 exchange a call over a
socket of its own, with a deadline per call, the key from AGENT_MEMORY_API_KEY (none: open
mode), and one error type for a refusal or an unreachable server.

Not `urllib.request`: its import (http.client, the email parser, ssl) cost a hook more than
all the rest of its start (docs/benchmarks.md, "What a hook's start costs"). A plain
socket speaks to the server; ssl is imported only for an https URL, and `urllib.request`
only where a proxy is configured for the server's host.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_URL = "http://127.0.0.1:8080"


# Where every client half of this project finds the server and its key (the hooks, the
# bridge, and the server's own CLI, app/client.py): the argument, else the environment.
URL_VARIABLE, KEY_VARIABLE = "AGENT_MEMORY_URL", "AGENT_MEMORY_API_KEY"


class Unavailable(Exception):
    """The server could not be asked, or refused (status 0: never answered); `fields`, the
    inputs a refusal names."""

    def __init__(self, status: int, detail: str, fields: list[str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.fields = fields or []


def server_url(url: str | None = None) -> str:
    """The server: `url`, else AGENT_MEMORY_URL, else DEFAULT_URL; `localhost:8080` is
    taken as http://localhost:8080, and a scheme other than http or https is refused."""
    url = (url or os.environ.get(URL_VARIABLE) or DEFAULT_URL).strip().rstrip("/")
    if "://" not in url:
        return f"http://{url}"
    scheme = url.split("://", 1)[0].lower()
    if scheme not in ("http", "https"):
        detail = f"the server URL must start with http:// or https://, not {scheme}://"
        raise Unavailable(0, detail)
    return url


def configured_key(key: str | None = None) -> str | None:
    """The key: `key`, else AGENT_MEMORY_API_KEY; none (open mode) when neither is set."""
    return key if key is not None else os.environ.get(KEY_VARIABLE) or None


def refusal(status: int, body: bytes, reason: str = "") -> Unavailable:
    """A refusal as the server words it: its problem details' `detail` and the fields its
    `errors` name, else the start of the body."""
    try:
        problem = json.loads(body)
        detail = str(problem.get("detail") or reason)
        fields = [str(e.get("field")) for e in problem.get("errors") or []]
    except (ValueError, AttributeError, TypeError):
        detail, fields = body[:200].decode("utf-8", "replace") or reason, []
    return Unavailable(status, detail or f"HTTP {status}", fields)


class Deadline:
    """A budget for a whole hook: each call gets what is left of it."""

    def __init__(self, seconds: float) -> None:
        self._ends = time.monotonic() + seconds

    def left(self) -> float:
        return self._ends - time.monotonic()


class Connection:
    def __init__(self, url: str | None, api_key: str | None, deadline: Deadline) -> None:
        self.url = server_url(url)
        key = configured_key(api_key)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._deadline = deadline

    def request(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, str, bytes]:
        """(status, content type, body); a refusal is returned, not raised."""
        left = self._deadline.left()
        if left <= 0.05:
            raise Unavailable(0, "out of time")
        query = {k: v for k, v in (params or {}).items() if v is not None}
        target = self.url + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        sent = {**self._headers, **(headers or {})}
        if data is not None and "Content-Type" not in sent:
            sent["Content-Type"] = "application/json"
        try:
            if proxied(target):
                return _through_proxy(method, target, sent, data, left)
            return _exchange(method, target, sent, data, self._deadline)
        except (OSError, ValueError) as exc:  # refused, reset, timed out, a bad URL
            reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
            raise Unavailable(0, f"not reachable at {self.url} ({reason})") from exc

    def call(self, method: str, path: str, **options: Any) -> Any:
        """The JSON (or text) of a successful answer; a refusal raises Unavailable with the
        problem's detail."""
        status, kind, body = self.request(method, path, **options)
        if 200 <= status < 300:
            if not body:
                return None
            return json.loads(body) if "json" in kind else body.decode("utf-8", "replace")
        raise refusal(status, body)


def proxied(url: str) -> bool:
    """Whether the environment routes `url` through a proxy (HTTP_PROXY and the like,
    unless NO_PROXY names its host), as urllib would."""
    scheme = url.split(":", 1)[0]
    if not (os.environ.get(f"{scheme}_proxy") or os.environ.get(f"{scheme.upper()}_PROXY")):
        return False
    import urllib.request

    host = urllib.parse.urlsplit(url).hostname or ""
    return not urllib.request.proxy_bypass(host)


def _through_proxy(
    method: str, url: str, headers: dict[str, str], data: bytes | None, timeout: float
) -> tuple[int, str, bytes]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers.get("Content-Type", ""), refused.read()


def _exchange(
    method: str, url: str, headers: dict[str, str], data: bytes | None, deadline: Deadline
) -> tuple[int, str, bytes]:
    """One request on a connection of its own (`Connection: close`: the answer ends where
    the server closes it), every read within the deadline."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    sock = socket.create_connection((parts.hostname, port), timeout=max(deadline.left(), 0.01))
    try:
        if parts.scheme == "https":
            import ssl

            context = ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=parts.hostname)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}", "Connection: close",
                 "Accept-Encoding: identity", f"Content-Length: {len(data or b'')}"]  # fmt: skip
        lines += [f"{name}: {value}" for name, value in headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (data or b""))
        received = bytearray()
        while True:
            left = deadline.left()
            if left <= 0:
                raise TimeoutError("timed out")
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    finally:
        sock.close()
    return _parsed(bytes(received))


def _parsed(answer: bytes) -> tuple[int, str, bytes]:
    head, separator, body = answer.partition(b"\r\n\r\n")
    if not separator:
        raise ValueError("the answer ended before its headers did")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    if fields.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunked(body)
    elif "content-length" in fields:
        body = body[: int(fields["content-length"])]
    return status, fields.get("content-type", ""), body


def _unchunked(body: bytes) -> bytes:
    whole = bytearray()
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        whole += body[:size]
        body = body[size + 2 :]
    return bytes(whole)
