"""A typed client for the REST API, and the server's CLI's one HTTP transport: every command
that talks to a running server goes through `MemoryClient`, whose `_exchange()` is the one
place a request is sent, its timeout set, the key sent, and an unreachable server or a
refusal turned into ClientError; `error_line()` is how a command says one. Over httpx, to
stream an export and an import both ways. Where the server and its key are found, and how
a refusal is read, are the client half's (agent_memory_client.connection), whose own
transport (a socket, the standard library only) the hooks and the bridge use: one rule for
every client of this project.

    with MemoryClient() as memory:              # AGENT_MEMORY_URL, AGENT_MEMORY_API_KEY
        hits = memory.search("flaky test", source_repo="acme/api")

Every call returns the response's JSON; a refusal raises ClientError with the problem
details' status, detail and fields; an unreachable server raises ClientError too (status
0), so a caller needs one `except`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from agent_memory_client.connection import Unavailable, configured_key, refusal, server_url

DEFAULT_TIMEOUT_S = 30.0
NDJSON = "application/x-ndjson"
# An import answers when the whole file is in (re-embedding included): no read timeout.
IMPORT_TIMEOUT = httpx.Timeout(DEFAULT_TIMEOUT_S, read=None)


# A refusal or an unreachable server (status 0): the client half's one error type.
ClientError = Unavailable


def default_url() -> str:
    return server_url()


def default_api_key() -> str | None:
    return configured_key()


def error_line(error: ClientError) -> str:
    """A refusal or an unreachable server as a command says it: the server's detail, and
    the fields it names."""
    fields = f" ({', '.join(error.fields)})" if error.fields else ""
    return f"{error.detail}{fields}"


def _without_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _filed(values: Mapping[str, Any]) -> dict[str, Any]:
    """A write's body: source_repo is sent even as null (global), which a write must say."""
    return {**_without_none(values), "source_repo": values.get("source_repo")}


def _answer(response: httpx.Response) -> Any:
    """A successful answer, read whole: its JSON, its text, or None when empty."""
    response.read()
    if not response.content:
        return None
    if "json" in response.headers.get("content-type", ""):
        return response.json()
    return response.text


class MemoryClient:
    """The API's operations, one method each; every one answers the response's JSON."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.url = server_url(url)
        key = configured_key(api_key)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout_s)

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @contextmanager
    def _exchange(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        content: Iterable[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
    ) -> Iterator[httpx.Response]:
        """The one way a request goes: its query without the unset values, sent (a body
        streamed as it is read), the answer open while the block reads it (streamed too). A
        refusal, and a server that cannot be reached or stops answering (the block's reads
        included), raise ClientError."""
        query = _without_none(params or {})
        try:
            request = self._http.build_request(
                method, path, params=query, json=json, content=content, headers=headers,
                timeout=timeout or self._http.timeout,
            )  # fmt: skip
            response = self._http.send(request, stream=True)
            try:
                if not response.is_success:
                    response.read()
                    raise refusal(response.status_code, response.content, response.reason_phrase)
                yield response
            finally:
                response.close()
        except httpx.HTTPError as exc:
            detail = f"agent-memory is not reachable at {self.url} ({type(exc).__name__})"
            raise ClientError(0, detail) from exc

    def send(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> Any:
        with self._exchange(method, path, params=params, json=json) as response:
            return _answer(response)

    def remember(self, text: str, **fields: Any) -> Any:
        return self.send("POST", "/remember", json=_filed({"text": text, **fields}))

    def store(self, content: str, **fields: Any) -> Any:
        return self.send("POST", "/memories", json=_filed({"content": content, **fields}))

    def search(self, q: str, **filters: Any) -> Any:
        return self.send("POST", "/search", json=_without_none({"q": q, **filters}))

    def list(self, **filters: Any) -> Any:
        return self.send("GET", "/memories", params=filters)

    def get(self, memory_id: str) -> Any:
        """By its id, or by the start of it (the server says when that is ambiguous)."""
        try:
            path = f"/memories/{UUID(memory_id)}"
        except ValueError:
            path = f"/memories/by-prefix/{quote(memory_id.strip(), safe='')}"
        return self.send("GET", path)

    def audit(self, **filters: Any) -> Any:
        return self.send("GET", "/audit", params=filters)

    def undo(self, entry_id: str) -> Any:
        return self.send("POST", f"/audit/{entry_id}/undo")

    def end_session(self, session_id: str, status: str, **fields: Any) -> Any:
        body = _without_none({"status": status, **fields})
        return self.send("POST", f"/sessions/{session_id}/end", json=body)

    def sessions(self, **filters: Any) -> Any:
        return self.send("GET", "/sessions", params=filters)

    def delete_session(self, session_id: str) -> Any:
        return self.send("DELETE", f"/sessions/{session_id}")

    def held(self) -> Any:
        return self.send("GET", "/memories/held")

    def approve(self, memory_id: str) -> Any:
        return self.send("POST", f"/memories/{memory_id}/approve")

    def queue_drafts(self, drafts: Sequence[Mapping[str, Any]]) -> Any:
        return self.send("POST", "/drafts", json={"drafts": [dict(d) for d in drafts]})

    def written_rules(self, source_repo: str | None, keys: Sequence[str]) -> Any:
        body = {"source_repo": source_repo, "keys": list(keys)}
        return self.send("POST", "/drafts/written", json=body)

    def standing(self, source_repo: str, max_chars: int | None = None) -> Any:
        params = {"source_repo": source_repo, "max_chars": max_chars}
        return self.send("GET", "/standing", params=params)

    def drafts(self, **filters: Any) -> Any:
        return self.send("GET", "/drafts", params=filters)

    def keep_draft(self, draft_id: str, text: str | None = None) -> Any:
        return self.send("POST", f"/drafts/{draft_id}/keep", json=_without_none({"text": text}))

    def drop_drafts(self, ids: Sequence[str]) -> Any:
        return self.send("POST", "/drafts/drop", json={"ids": list(ids)})

    def restore_draft(self, draft_id: str) -> Any:
        return self.send("POST", f"/drafts/{draft_id}/restore")

    def proposals(self, kinds: Sequence[str] | None = None, limit: int | None = None) -> Any:
        return self.send("GET", "/proposals", params={"kind": kinds, "limit": limit})

    def refresh_proposals(self) -> Any:
        return self.send("POST", "/proposals/refresh")

    def decide_proposal(self, proposal_id: str, action: str) -> Any:
        return self.send("POST", f"/proposals/{proposal_id}/{action}")

    def export(
        self,
        source_repo: str | None = None,
        embeddings: bool = False,
        since: str | None = None,
        until: str | None = None,
    ) -> Iterator[str]:
        """The export's lines (header first) as the server streams them."""
        params = {"source_repo": source_repo, "embeddings": embeddings, "since": since,
                  "until": until}  # fmt: skip
        with self._exchange("GET", "/memories/export", params=params) as response:
            yield from response.iter_lines()

    def import_lines(self, body: Iterable[bytes]) -> Any:
        """Send an export's bytes (streamed as they are read); the import's report."""
        with self._exchange(
            "POST", "/memories/import", content=body, headers={"Content-Type": NDJSON},
            timeout=IMPORT_TIMEOUT,
        ) as response:  # fmt: skip
            return _answer(response)
