"""A client's metadata document is a URL an outsider chose: fetched only over https from a
public address (localhost only when a developer allows it), no redirect followed, small,
quick, checked, and kept within bounds (app/services/client_documents.py)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

import app.services.client_documents as documents_module
from app.services.client_documents import ClientDocuments, RefusedDocument
from tests.conftest import on_loopback
from tests.oauth_flow import REDIRECT, localhost_certificate


class DocumentServer:
    """Documents over https on localhost, each path answering as a test sets it; every
    request counted."""

    def __init__(self) -> None:
        self.answers: dict[str, Callable[[str], Response]] = {}
        self.requests: list[tuple[str, str | None]] = []  # path, Host
        self.base = ""
        self.released = asyncio.Event()  # what a stalled answer waits for: the test's end

    def document(self, path: str, **changes: Any) -> str:
        url = f"{self.base}{path}"
        body = {"client_id": url, "client_name": "Doc client", "redirect_uris": [REDIRECT],
                **changes}  # fmt: skip
        self.answers[path] = lambda _: JSONResponse(body)
        return url

    def app(self) -> Starlette:
        async def answer(request: Request) -> Response:
            path = request.url.path
            self.requests.append((path, request.headers.get("host")))
            if path == "/stall":
                await self.released.wait()  # no answer while the test runs
            return self.answers[path](path)

        return Starlette(routes=[Route("/{path:path}", answer)])


@pytest.fixture
async def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[DocumentServer]:
    ca, certificate, key = localhost_certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    server = DocumentServer()

    def config(port: int) -> uvicorn.Config:
        return uvicorn.Config(server.app(), host="127.0.0.1", port=port, lifespan="off",
                              log_config=None, ssl_certfile=str(certificate),
                              ssl_keyfile=str(key))  # fmt: skip

    async with on_loopback(config) as port:
        server.base = f"https://localhost:{port}"
        try:
            yield server
        finally:
            server.released.set()


async def test_a_good_document_is_fetched_once_and_kept(served: DocumentServer) -> None:
    documents = ClientDocuments(on_loopback=True)
    url = served.document("/client.json")
    first = await documents.metadata(url)
    assert first is not None and first["client_name"] == "Doc client"
    assert first["token_endpoint_auth_method"] == "none"
    assert await documents.metadata(url) == first
    # One request, to the address checked, with the name as Host (and TLS checked the name).
    assert served.requests == [("/client.json", served.base.removeprefix("https://"))]


async def test_localhost_only_when_a_developer_allows_it(served: DocumentServer) -> None:
    url = served.document("/client.json")
    assert await ClientDocuments(on_loopback=False).metadata(url) is None
    # OAUTH_CLIENT_DOCUMENTS=false: no client is named by a document at all.
    assert await ClientDocuments(on_loopback=True, enabled=False).metadata(url) is None
    assert served.requests == []  # not even asked


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"client_id": "https://someone.else/client.json"}, "its client_id is not its own URL"),
        ({"client_secret": "s3cret"}, "it holds a client secret"),
        ({"token_endpoint_auth_method": "client_secret_post"}, "only none"),
        ({"redirect_uris": ["http://evil.example/cb"]}, "loopback only"),
        ({"redirect_uris": []}, "redirect_uris"),
        ({"grant_types": ["client_credentials"]}, "authorization_code"),
        ({"client_name": "Сlaude"}, "mixes scripts"),
    ],
)
async def test_a_document_this_server_does_not_accept_is_refused(
    served: DocumentServer, changes: dict[str, Any], why: str, caplog: pytest.LogCaptureFixture
) -> None:
    documents = ClientDocuments(on_loopback=True)
    url = served.document("/client.json", **changes)
    assert await documents.metadata(url) is None
    refusal = next(
        r for r in caplog.records if r.getMessage() == "client metadata document refused"
    )
    assert why in refusal.__dict__["why"]
    # Never kept: asked again, fetched again.
    assert await documents.metadata(url) is None
    assert len(served.requests) == 2


async def test_no_redirect_is_followed(served: DocumentServer) -> None:
    target = served.document("/elsewhere.json")
    served.answers["/moved.json"] = lambda _: RedirectResponse(target, status_code=302)
    assert await ClientDocuments(on_loopback=True).metadata(f"{served.base}/moved.json") is None
    assert [path for path, _ in served.requests] == ["/moved.json"]


async def test_a_large_or_slow_document_is_refused(served: DocumentServer) -> None:
    big = served.document("/big.json", client_name="x", padding="p" * 6_000)
    assert await ClientDocuments(on_loopback=True).metadata(big) is None
    quick = ClientDocuments(on_loopback=True, timeout_s=0.5)
    assert await quick.metadata(f"{served.base}/stall") is None


async def test_a_name_with_an_inner_address_is_refused_before_any_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = socket.getaddrinfo
    answers = {"inner.example": ["10.0.0.5"], "mixed.example": ["93.184.216.34", "10.0.0.5"]}

    def resolve(host: str, *args: Any, **kwargs: Any) -> Any:
        if host not in answers:
            return real(host, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 443)) for a in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    documents = ClientDocuments(on_loopback=False)
    for host in answers:
        with pytest.raises(RefusedDocument, match="not public"):
            await documents._addresses(host, 443)
        assert await documents.metadata(f"https://{host}/client.json") is None


async def test_documents_kept_are_bounded(
    served: DocumentServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents_module, "CLIENT_DOCUMENTS_KEPT", 2)
    documents = ClientDocuments(on_loopback=True)
    urls = [served.document(f"/c{n}.json") for n in range(3)]
    for url in (*urls, urls[0]):  # the first was let go for the third
        assert await documents.metadata(url) is not None
    assert [path for path, _ in served.requests] == ["/c0.json", "/c1.json", "/c2.json", "/c0.json"]
