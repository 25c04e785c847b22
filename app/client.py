"""A typed client for the REST API, sync and async, used by the CLI, over httpx (streamed
export and import). Where the server and its key are found, and how a refusal is read, are
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
from dataclasses import dataclass, field
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


@dataclass(frozen=True, slots=True)
class Call:
    """One request, as both clients send it."""

    method: str
    path: str
    params: Mapping[str, Any] | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


def default_url() -> str:
    return server_url()


def default_api_key() -> str | None:
    return configured_key()


def _without_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _filed(values: Mapping[str, Any]) -> dict[str, Any]:
    """A write's body: source_repo is sent even as null (global), which a write must say."""
    return {**_without_none(values), "source_repo": values.get("source_repo")}


class Calls:
    """The API's operations as requests (no I/O): what both clients share."""

    @staticmethod
    def remember(text: str, **fields: Any) -> Call:
        return Call("POST", "/remember", json=_filed({"text": text, **fields}))

    @staticmethod
    def store(content: str, **fields: Any) -> Call:
        return Call("POST", "/memories", json=_filed({"content": content, **fields}))

    @staticmethod
    def search(q: str, **filters: Any) -> Call:
        return Call("POST", "/search", json=_without_none({"q": q, **filters}))

    @staticmethod
    def list(**filters: Any) -> Call:
        return Call("GET", "/memories", params=_without_none(filters))

    @staticmethod
    def get(memory_id: str) -> Call:
        """By its id, or by the start of it (the server says when that is ambiguous)."""
        try:
            return Call("GET", f"/memories/{UUID(memory_id)}")
        except ValueError:
            return Call("GET", f"/memories/by-prefix/{quote(memory_id.strip(), safe='')}")

    @staticmethod
    def audit(**filters: Any) -> Call:
        return Call("GET", "/audit", params=_without_none(filters))

    @staticmethod
    def undo(entry_id: str) -> Call:
        return Call("POST", f"/audit/{entry_id}/undo")

    @staticmethod
    def start_session(**fields: Any) -> Call:
        return Call("POST", "/sessions", json=_without_none(fields))

    @staticmethod
    def delete_session(session_id: str) -> Call:
        return Call("DELETE", f"/sessions/{session_id}")

    @staticmethod
    def held() -> Call:
        return Call("GET", "/memories/held")

    @staticmethod
    def approve(memory_id: str) -> Call:
        return Call("POST", f"/memories/{memory_id}/approve")

    @staticmethod
    def queue_drafts(drafts: Sequence[Mapping[str, Any]]) -> Call:
        return Call("POST", "/drafts", json={"drafts": [dict(d) for d in drafts]})

    @staticmethod
    def drafts(**filters: Any) -> Call:
        return Call("GET", "/drafts", params=_without_none(filters))

    @staticmethod
    def keep_draft(draft_id: str, text: str | None = None) -> Call:
        return Call("POST", f"/drafts/{draft_id}/keep", json=_without_none({"text": text}))

    @staticmethod
    def drop_drafts(ids: Sequence[str]) -> Call:
        return Call("POST", "/drafts/drop", json={"ids": list(ids)})

    @staticmethod
    def restore_draft(draft_id: str) -> Call:
        return Call("POST", f"/drafts/{draft_id}/restore")

    @staticmethod
    def proposals(kinds: Sequence[str] | None = None, limit: int | None = None) -> Call:
        return Call("GET", "/proposals", params=_without_none({"kind": kinds, "limit": limit}))

    @staticmethod
    def refresh_proposals() -> Call:
        return Call("POST", "/proposals/refresh")

    @staticmethod
    def decide_proposal(proposal_id: str, action: str) -> Call:
        return Call("POST", f"/proposals/{proposal_id}/{action}")

    @staticmethod
    def sessions(**filters: Any) -> Call:
        return Call("GET", "/sessions", params=_without_none(filters))

    @staticmethod
    def end_session(session_id: str, status: str, **fields: Any) -> Call:
        body = _without_none({"status": status, **fields})
        return Call("POST", f"/sessions/{session_id}/end", json=body)

    @staticmethod
    def snapshot(
        source_repo: str | None = None,
        max_chars: int | None = None,
        format: str = "json",
        max_tokens: int | None = None,
    ) -> Call:
        """`format`: "json", or "markdown" (answered as text, to paste into a prompt)."""
        bounds = {"max_chars": max_chars, "max_tokens": max_tokens}
        params = _without_none({"source_repo": source_repo, **bounds})
        return Call("GET", "/snapshot", params={**params, "format": format})


def _options(url: str, api_key: str | None, timeout_s: float) -> dict[str, Any]:
    """What both clients are built with: the server, the key (or none), the timeout."""
    key = configured_key(api_key)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return {"base_url": url, "headers": headers, "timeout": timeout_s}


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
    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.url = server_url(url or default_url()).rstrip("/")
        self._http = httpx.Client(**_options(self.url, api_key, timeout_s))

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def send(self, call: Call) -> Any:
        try:
            response = self._http.request(
                call.method, call.path, params=call.params, json=call.json, headers=call.headers
            )
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc
        return _answer(response)

    def remember(self, text: str, **fields: Any) -> Any:
        return self.send(Calls.remember(text, **fields))

    def store(self, content: str, **fields: Any) -> Any:
        return self.send(Calls.store(content, **fields))

    def search(self, q: str, **filters: Any) -> Any:
        return self.send(Calls.search(q, **filters))

    def list(self, **filters: Any) -> Any:
        return self.send(Calls.list(**filters))

    def get(self, memory_id: str) -> Any:
        return self.send(Calls.get(memory_id))

    def audit(self, **filters: Any) -> Any:
        return self.send(Calls.audit(**filters))

    def undo(self, entry_id: str) -> Any:
        return self.send(Calls.undo(entry_id))

    def start_session(self, **fields: Any) -> Any:
        return self.send(Calls.start_session(**fields))

    def end_session(self, session_id: str, status: str, **fields: Any) -> Any:
        return self.send(Calls.end_session(session_id, status, **fields))

    def sessions(self, **filters: Any) -> Any:
        return self.send(Calls.sessions(**filters))

    def delete_session(self, session_id: str) -> Any:
        return self.send(Calls.delete_session(session_id))

    def held(self) -> Any:
        return self.send(Calls.held())

    def approve(self, memory_id: str) -> Any:
        return self.send(Calls.approve(memory_id))

    def queue_drafts(self, drafts: Sequence[Mapping[str, Any]]) -> Any:
        return self.send(Calls.queue_drafts(drafts))

    def drafts(self, **filters: Any) -> Any:
        return self.send(Calls.drafts(**filters))

    def keep_draft(self, draft_id: str, text: str | None = None) -> Any:
        return self.send(Calls.keep_draft(draft_id, text))

    def drop_drafts(self, ids: Sequence[str]) -> Any:
        return self.send(Calls.drop_drafts(ids))

    def restore_draft(self, draft_id: str) -> Any:
        return self.send(Calls.restore_draft(draft_id))

    def proposals(self, kinds: Sequence[str] | None = None, limit: int | None = None) -> Any:
        return self.send(Calls.proposals(kinds, limit))

    def refresh_proposals(self) -> Any:
        return self.send(Calls.refresh_proposals())

    def decide_proposal(self, proposal_id: str, action: str) -> Any:
        return self.send(Calls.decide_proposal(proposal_id, action))

    def snapshot(
        self,
        source_repo: str | None = None,
        max_chars: int | None = None,
        format: str = "json",
        max_tokens: int | None = None,
    ) -> Any:
        return self.send(Calls.snapshot(source_repo, max_chars, format, max_tokens))

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


class AsyncMemoryClient:
    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.url = server_url(url or default_url()).rstrip("/")
        self._http = httpx.AsyncClient(**_options(self.url, api_key, timeout_s))

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def send(self, call: Call) -> Any:
        try:
            response = await self._http.request(
                call.method, call.path, params=call.params, json=call.json, headers=call.headers
            )
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc
        return _answer(response)

    async def remember(self, text: str, **fields: Any) -> Any:
        return await self.send(Calls.remember(text, **fields))

    async def search(self, q: str, **filters: Any) -> Any:
        return await self.send(Calls.search(q, **filters))

    async def get(self, memory_id: str) -> Any:
        return await self.send(Calls.get(memory_id))

    async def start_session(self, **fields: Any) -> Any:
        return await self.send(Calls.start_session(**fields))

    async def end_session(self, session_id: str, status: str, **fields: Any) -> Any:
        return await self.send(Calls.end_session(session_id, status, **fields))

    async def snapshot(
        self,
        source_repo: str | None = None,
        max_chars: int | None = None,
        format: str = "json",
        max_tokens: int | None = None,
    ) -> Any:
        return await self.send(Calls.snapshot(source_repo, max_chars, format, max_tokens))
