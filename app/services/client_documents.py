"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, as the MCP
authorization spec 2025-11-25 asks): a client whose client_id is an https URL is described
by the JSON document at that URL, which this server fetches. That URL is an outsider's
choice, so the fetch is narrow:

- https only, to a host name (no IP literal, no user), with a path (app/domain/oauth.py
  client_document_url_problem); OAUTH_LOCAL_CLIENT_DOCUMENTS alone allows localhost, over
  http too, for developing a client;
- the name is resolved here and every address it has must be public (no private, loopback,
  link-local, shared or reserved one); the connection goes to the address checked, with the
  name for TLS (SNI and the certificate) and the Host header, so a second resolution cannot
  swap in an inner address (DNS rebinding);
- no redirect followed, 200 only, no content encoding, at most MAX_CLIENT_DOCUMENT_BYTES
  read, one deadline over the resolution and the whole fetch, no proxy from the
  environment, and a few fetches at once per process;
- the document must name its own URL as client_id, list redirect URIs this server accepts,
  hold no secret and ask for no client authentication (a public client, PKCE alone).

A valid document is kept for its Cache-Control max-age within bounds (an hour when unsaid),
for at most CLIENT_DOCUMENTS_KEPT documents, least recently used out; an invalid one is
never kept. Why one was refused goes to the log (the client only learns its id is unknown).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import ssl
import time
from collections import OrderedDict
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import certifi
import httpx

from app.domain.errors import InvalidInputError
from app.domain.oauth import (
    CLIENT_DOCUMENT_TIMEOUT_S,
    CLIENT_DOCUMENTS_KEPT,
    LOOPBACK_NAMES,
    MAX_CLIENT_DOCUMENT_BYTES,
    MAX_REDIRECT_URIS,
    client_document_url_problem,
    client_name,
    document_ttl_s,
    is_public_address,
    redirect_uri_problem,
)

logger = logging.getLogger("agent_memory.oauth")

FETCHES_AT_ONCE = 4


class RefusedDocument(Exception):
    """Why a client's metadata document is not one this server accepts."""


class ClientDocuments:
    """Fetched documents, kept per process (a cache: every worker fetches its own)."""

    def __init__(
        self, on_loopback: bool, timeout_s: float = CLIENT_DOCUMENT_TIMEOUT_S, enabled: bool = True
    ) -> None:
        self.enabled = enabled  # OAUTH_CLIENT_DOCUMENTS: off, no client is named by one
        self.on_loopback = on_loopback
        self._timeout_s = timeout_s
        self._kept: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()
        self._fetching = asyncio.Semaphore(FETCHES_AT_ONCE)

    async def metadata(self, url: str) -> dict[str, Any] | None:
        """The client's metadata as its document gives it, checked; None when refused."""
        if not self.enabled:
            return None
        kept = self._kept.get(url)
        if kept is not None and kept[0] > time.monotonic():
            self._kept.move_to_end(url)
            return kept[1]
        try:
            async with self._fetching:
                ttl, metadata = await asyncio.wait_for(self._fetch(url), self._timeout_s)
        except (RefusedDocument, InvalidInputError) as refused:
            logger.warning(
                "client metadata document refused", extra={"url": url[:300], "why": str(refused)}
            )
            return None
        except (TimeoutError, httpx.HTTPError, OSError) as failed:
            logger.warning(
                "client metadata document not fetched",
                extra={"url": url[:300], "why": f"{type(failed).__name__}: {failed}"[:300]},
            )
            return None
        self._kept[url] = (time.monotonic() + ttl, metadata)
        self._kept.move_to_end(url)
        while len(self._kept) > CLIENT_DOCUMENTS_KEPT:
            self._kept.popitem(last=False)
        return metadata

    async def _fetch(self, url: str) -> tuple[int, dict[str, Any]]:
        problem = client_document_url_problem(url, self.on_loopback)
        if problem is not None:
            raise RefusedDocument(problem)
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = await self._addresses(host, port)
        for address in addresses:
            try:
                return await _fetch_from(url, address, port)
            except httpx.ConnectError:
                if address == addresses[-1]:
                    raise
        raise AssertionError("unreachable")

    async def _addresses(self, host: str, port: int) -> list[str]:
        """The addresses to connect to, in turn: every address the name has must be public
        (a name with one inner address among outer ones is refused), except localhost's
        when allowed."""
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = [str(info[4][0]) for info in found]
        if not addresses:
            raise RefusedDocument(f"{host} has no address")
        local = self.on_loopback and host in LOOPBACK_NAMES
        if not local and not all(is_public_address(a) for a in addresses):
            raise RefusedDocument(f"{host} resolves to an address that is not public")
        return addresses


async def _fetch_from(url: str, address: str, port: int) -> tuple[int, dict[str, Any]]:
    """The document from that address, the URL's name sent for TLS and as the Host."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    shown = f"[{address}]" if ":" in address else address
    direct = urlunsplit((parts.scheme, f"{shown}:{port}", parts.path, parts.query, ""))
    headers = {
        "Host": host if parts.port is None else f"{host}:{port}",
        "Accept": "application/json",
        "Accept-Encoding": "identity",
    }
    async with (
        httpx.AsyncClient(verify=_tls(), trust_env=False, follow_redirects=False) as http,
        http.stream("GET", direct, headers=headers, extensions={"sni_hostname": host}) as response,
    ):
        if response.status_code != 200:
            raise RefusedDocument(f"answered {response.status_code}, not 200")
        if response.headers.get("content-encoding", "identity") != "identity":
            raise RefusedDocument("a content encoding")
        body = bytearray()
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) > MAX_CLIENT_DOCUMENT_BYTES:
                raise RefusedDocument(f"larger than {MAX_CLIENT_DOCUMENT_BYTES} bytes")
        ttl = document_ttl_s(response.headers.get("cache-control"))
    return ttl, checked(url, bytes(body))


def _tls() -> ssl.SSLContext:
    """The certificates a document's server is checked against: SSL_CERT_FILE or
    SSL_CERT_DIR when set (as every TLS client honours them), else certifi's bundle."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    return ssl.create_default_context(cafile=certifi.where())


def checked(url: str, body: bytes) -> dict[str, Any]:
    """The document's metadata, if it is one this server accepts for the client `url`."""
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise RefusedDocument("not JSON") from exc
    if not isinstance(document, dict):
        raise RefusedDocument("not a JSON object")
    if document.get("client_id") != url:
        raise RefusedDocument("its client_id is not its own URL")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise RefusedDocument("it holds a client secret")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise RefusedDocument(f"token_endpoint_auth_method {str(method)[:40]!r}: only none")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise RefusedDocument(f"redirect_uris: 1 to {MAX_REDIRECT_URIS} URIs")
    for uri in uris:
        problem = redirect_uri_problem(uri) if isinstance(uri, str) else "not a string"
        if problem is not None:
            raise RefusedDocument(problem)
    grant_types = document.get("grant_types", ["authorization_code"])
    if not isinstance(grant_types, list) or "authorization_code" not in grant_types:
        raise RefusedDocument("grant_types without authorization_code")
    name = document.get("client_name")
    return {
        **document,
        "token_endpoint_auth_method": "none",
        "client_name": client_name(name if isinstance(name, str) else None, url),
    }
