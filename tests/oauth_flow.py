"""What an OAuth test plays besides the client: the person's browser on the console's consent
page, a client's PKCE and token requests by hand (for the refusals), and a TLS certificate
for a client's metadata document served on localhost. And the client: the MCP SDK's own
OAuth client, connected to /mcp."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import httpx
import httpx2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from tests.helpers.console import csrf_of

# Where the test clients ask their codes to go: nothing listens there; the browser below
# reads where it was sent instead of following.
REDIRECT = "http://localhost:3030/callback"


async def sign_in(http: httpx.AsyncClient, key: str, then: str = "") -> httpx.Response:
    form = await http.get("/console/sign-in", params={"next": then} if then else None)
    data = {"api_key": key, "csrf_token": csrf_of(form.text)}
    if then:
        data["next"] = then
    return await http.post("/console/sign-in", data=data)


async def consent_page(http: httpx.AsyncClient, key: str, authorization_url: str) -> str:
    """From a client's authorization URL to its consent page, signing in on the way (the
    sign-in leads back there); the page's path."""
    asked = await http.get(authorization_url)
    assert asked.status_code == 302, asked.text
    page = asked.headers["location"]
    assert page.startswith("/console/oauth/"), page
    first = await http.get(page)
    if first.status_code == 303:  # not signed in yet
        assert first.headers["location"] == "/console/sign-in?next=" + quote(page, safe="")
        signed = await sign_in(http, key, page)
        assert (signed.status_code, signed.headers["location"]) == (303, page), signed.text
    return page


async def decide(
    http: httpx.AsyncClient, page: str, decision: str = "approve", role: str = "agent"
) -> httpx.Response:
    shown = await http.get(page)
    assert shown.status_code == 200, shown.text
    data = {"csrf_token": csrf_of(shown.text), "decision": decision, "role": role}
    return await http.post(page, data=data)


@dataclass
class Browser:
    """The person at the console: signs in with their key, approves (or denies) what a client
    asks, and hands the client what the redirect carried (the SDK client's redirect and
    callback handlers)."""

    base: str
    key: str
    role: str = "agent"
    decision: str = "approve"
    consent_pages: list[str] = field(default_factory=list)
    pages_seen: list[str] = field(default_factory=list)  # the consent pages' HTML
    sent_to: str = ""

    async def open(self, authorization_url: str) -> None:
        async with httpx.AsyncClient(base_url=self.base, timeout=60) as http:
            page = await consent_page(http, self.key, authorization_url)
            self.consent_pages.append(page)
            self.pages_seen.append((await http.get(page)).text)
            decided = await decide(http, page, self.decision, self.role)
        assert decided.status_code == 303, decided.text
        self.sent_to = decided.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.sent_to).query).items()}
        return AuthorizationCodeResult(
            code=query.get("code", ""), state=query.get("state"), iss=query.get("iss")
        )


@dataclass
class Kept:
    """The SDK client's token storage, in memory."""

    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


# A client's requests by hand.


def pkce() -> tuple[str, str]:
    """A verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


async def register(http: httpx.AsyncClient, **metadata: Any) -> dict[str, Any]:
    body = {"client_name": "Hand client", "redirect_uris": [REDIRECT], **metadata}
    answer = await http.post("/register", json=body)
    assert answer.status_code == 201, answer.text
    registered: dict[str, Any] = answer.json()
    return registered


def authorization_url(
    client_id: str, challenge: str | None, redirect: str = REDIRECT, **extra: str
) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
              "state": "st-1", **extra}  # fmt: skip
    if challenge is not None:
        params |= {"code_challenge": challenge, "code_challenge_method": "S256"}
    params = {k: v for k, v in params.items() if v}
    return "/authorize?" + urlencode(params)


def query_of(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def granted_code(
    base: str, key: str, client_id: str, challenge: str, role: str = "agent"
) -> dict[str, str]:
    """The redirect's query after the person approved: code, state, iss."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        page = await consent_page(http, key, authorization_url(client_id, challenge))
        decided = await decide(http, page, "approve", role)
    assert decided.status_code == 303, decided.text
    return query_of(decided.headers["location"])


async def exchange(
    http: httpx.AsyncClient, client: dict[str, Any], code: str, verifier: str, **extra: str
) -> httpx.Response:
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
            "client_id": client["client_id"], "client_secret": client["client_secret"],
            "code_verifier": verifier, **extra}  # fmt: skip
    return await http.post("/token", data=data)


async def refresh(
    http: httpx.AsyncClient, client: dict[str, Any], token: str, **extra: str
) -> httpx.Response:
    data = {"grant_type": "refresh_token", "refresh_token": token,
            "client_id": client["client_id"], "client_secret": client["client_secret"],
            **extra}  # fmt: skip
    return await http.post("/token", data=data)


async def connected_by_hand(
    base: str, key: str, role: str = "agent"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A client registered, approved and holding its first tokens: (client, tokens)."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        client = await register(http)
        verifier, challenge = pkce()
        code = (await granted_code(base, key, client["client_id"], challenge, role))["code"]
        tokens = await exchange(http, client, code, verifier)
    assert tokens.status_code == 200, tokens.text
    return client, tokens.json()


def mcp_call(token: str) -> dict[str, Any]:
    """A tools/list POST to /mcp with this bearer (its headers and body)."""
    return {
        "headers": {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        "json": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    }


# TLS for a client document on localhost.


def localhost_certificate(directory: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate it signed for localhost: (ca, certificate, key) files."""

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("agent-memory test CA"))
        .issuer_name(name("agent-memory test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name("localhost"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = (directory / "ca.pem", directory / "localhost.pem", directory / "localhost.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def sdk_client(
    base: str, browser: Browser, storage: Kept, metadata_url: str | None = None
) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="SDK test client", redirect_uris=[AnyUrl(REDIRECT)]
        ),
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
        client_metadata_url=metadata_url,
    )


@asynccontextmanager
async def connected(base: str, oauth: OAuthClientProvider) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(auth=oauth, timeout=60) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):
        yield client
