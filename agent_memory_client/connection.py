"""The server, as the hooks and the bridge reach it: `urllib` with a deadline per call,
the key from AGENT_MEMORY_API_KEY (none: open mode), and one error type for a refusal or an
unreachable server."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8080"


class Unavailable(Exception):
    """The server could not be asked, or refused (status 0: never answered)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def server_url(url: str | None) -> str:
    url = (url or os.environ.get("AGENT_MEMORY_URL") or DEFAULT_URL).strip().rstrip("/")
    return url if "://" in url else f"http://{url}"


class Deadline:
    """A budget for a whole hook: each call gets what is left of it."""

    def __init__(self, seconds: float) -> None:
        self._ends = time.monotonic() + seconds

    def left(self) -> float:
        return self._ends - time.monotonic()


class Connection:
    def __init__(self, url: str | None, api_key: str | None, deadline: Deadline) -> None:
        self.url = server_url(url)
        key = api_key if api_key is not None else os.environ.get("AGENT_MEMORY_API_KEY")
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
        request = urllib.request.Request(target, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=left) as response:
                kind = response.headers.get("Content-Type", "")
                return response.status, kind, response.read()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.headers.get("Content-Type", ""), refused.read()
        except (OSError, ValueError) as exc:  # refused, reset, timed out, a bad URL
            reason = getattr(exc, "reason", exc)
            raise Unavailable(0, f"not reachable at {self.url} ({reason})") from exc

    def call(self, method: str, path: str, **options: Any) -> Any:
        """The JSON (or text) of a successful answer; a refusal raises Unavailable with the
        problem's detail."""
        status, kind, body = self.request(method, path, **options)
        if 200 <= status < 300:
            if not body:
                return None
            return json.loads(body) if "json" in kind else body.decode("utf-8", "replace")
        try:
            detail = str(json.loads(body).get("detail"))
        except (ValueError, AttributeError):
            detail = body[:200].decode("utf-8", "replace")
        raise Unavailable(status, detail or f"HTTP {status}")
