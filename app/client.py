"""A typed client for the REST API, used by the server's CLI, over httpx (streamed export
and import). Where the server and its key are found, and how a refusal is read, are
the client half's (agent_memory_client.connection), which the hooks and the bridge use: one
rule for every client of this project.

    with MemoryClient() as memory:              # AGENT_MEMORY_URL, AGENT_MEMORY_API_KEY
        hits = memory.search("flaky test", source_repo="acme/api")

Every call returns the response's JSON; a refusal raises ClientError with the problem
details' status, detail and fields; an unreachable server raises ClientError too (status
0), so a caller needs one `except`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
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


def _without_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _filed(values: Mapping[str, Any]) -> dict[str, Any]:
    """A write's body: source_repo is sent even as null (global), which a write must say."""
    return {**_without_none(values), "source_repo": values.get("source_repo")}


def _answer(response: httpx.Response) -> Any:
    if response.is_success:
        if not response.content:
            return None
        if "json" in response.headers.get("content-type", ""):
            return response.json()
        return response.text
    raise refusal(response.status_code, response.content, response.reason_phrase)


def _unreachable(url: str, exc: httpx.HTTPError) -> ClientError:
    return ClientError(0, f"agent-memory is not reachable at {url} ({type(exc).__name__})")


class MemoryClient:
    """The API's operations, one method each; every one answers the response's JSON."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.url = server_url(url or default_url()).rstrip("/")
        key = configured_key(api_key)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout_s)

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def send(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> Any:
        try:
            response = self._http.request(method, path, params=params, json=json)
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc
        return _answer(response)

    def remember(self, text: str, **fields: Any) -> Any:
        return self.send("POST", "/remember", json=_filed({"text": text, **fields}))

    def store(self, content: str, **fields: Any) -> Any:
        return self.send("POST", "/memories", json=_filed({"content": content, **fields}))

    def search(self, q: str, **filters: Any) -> Any:
        return self.send("POST", "/search", json=_without_none({"q": q, **filters}))

    def list(self, **filters: Any) -> Any:
        return self.send("GET", "/memories", params=_without_none(filters))

    def get(self, memory_id: str) -> Any:
        """By its id, or by the start of it (the server says when that is ambiguous)."""
        try:
            path = f"/memories/{UUID(memory_id)}"
        except ValueError:
            path = f"/memories/by-prefix/{quote(memory_id.strip(), safe='')}"
        return self.send("GET", path)

    def audit(self, **filters: Any) -> Any:
        return self.send("GET", "/audit", params=_without_none(filters))

    def undo(self, entry_id: str) -> Any:
        return self.send("POST", f"/audit/{entry_id}/undo")

    def end_session(self, session_id: str, status: str, **fields: Any) -> Any:
        body = _without_none({"status": status, **fields})
        return self.send("POST", f"/sessions/{session_id}/end", json=body)

    def sessions(self, **filters: Any) -> Any:
        return self.send("GET", "/sessions", params=_without_none(filters))

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
        params = _without_none({"source_repo": source_repo, "max_chars": max_chars})
        return self.send("GET", "/standing", params=params)

    def drafts(self, **filters: Any) -> Any:
        return self.send("GET", "/drafts", params=_without_none(filters))

    def keep_draft(self, draft_id: str, text: str | None = None) -> Any:
        return self.send("POST", f"/drafts/{draft_id}/keep", json=_without_none({"text": text}))

    def drop_drafts(self, ids: Sequence[str]) -> Any:
        return self.send("POST", "/drafts/drop", json={"ids": list(ids)})

    def restore_draft(self, draft_id: str) -> Any:
        return self.send("POST", f"/drafts/{draft_id}/restore")

    def proposals(self, kinds: Sequence[str] | None = None, limit: int | None = None) -> Any:
        return self.send("GET", "/proposals", params=_without_none({"kind": kinds, "limit": limit}))

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
        params = _without_none(
            {"source_repo": source_repo, "embeddings": embeddings, "since": since, "until": until}
        )
        try:
            with self._http.stream("GET", "/memories/export", params=params) as response:
                if not response.is_success:
                    response.read()
                    _answer(response)
                yield from response.iter_lines()
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc

    def import_lines(self, body: Iterable[bytes]) -> Any:
        """Send an export's bytes (streamed as they are read); the import's report."""
        try:
            response = self._http.post(
                "/memories/import",
                content=body,
                headers={"Content-Type": NDJSON},
                timeout=IMPORT_TIMEOUT,
            )
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc
        return _answer(response)
