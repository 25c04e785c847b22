"""Remote MCP over OAuth 2.1, end to end: the MCP SDK's own OAuth client (mcp.client.auth, a
client nobody here wrote) against the running server finds the metadata from /mcp's 401,
registers (by RFC 7591, or by a Client ID Metadata Document), gets a person's consent on
the console, and works; its token refreshes, and a revocation ends it. Each refusal the
spec asks for answers its OAuth error. Keys keep working beside it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.config import Settings
from app.domain.oauth import AuthorizationRequest
from app.embeddings.base import Embedder
from app.main import create_app
from app.repository.oauth import OAuthRepository
from app.services.keys import KeyService
from tests.conftest import EMPTY_TABLES, on_loopback, running, serving
from tests.oauth_flow import (
    REDIRECT,
    Browser,
    Kept,
    authorization_url,
    connected,
    connected_by_hand,
    consent_page,
    decide,
    exchange,
    granted_code,
    localhost_certificate,
    mcp_call,
    pkce,
    query_of,
    refresh,
    register,
    sdk_client,
    sign_in,
)

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus


@pytest.fixture(scope="module")
async def oauth_app(
    settings: Settings, embedder: Embedder, database_url: str
) -> AsyncIterator[FastAPI]:
    """The service as a developer of a client runs it: client documents from localhost."""
    local = settings.model_copy(update={"oauth_local_client_documents": True})
    application = create_app(local, embedder=embedder, database_url=database_url)
    async with running(application):
        yield application


@pytest.fixture
async def base(oauth_app: FastAPI, db: asyncpg.Connection) -> AsyncIterator[str]:
    async with serving(oauth_app) as url:
        yield url
    await db.execute(EMPTY_TABLES)


@pytest.fixture
async def people(base: str, db: asyncpg.Connection) -> dict[str, Any]:
    """Ada (an admin of team), Bob (a reader of team), and Eve (an admin of another tenant),
    each with a key that acts for them."""
    keys = KeyService.on_connection(db)
    made: dict[str, Any] = {}
    for who, tenant, role in (("Ada", "team", "admin"), ("Bob", "team", "reader"),
                              ("Eve", "other", "admin")):  # fmt: skip
        new = await keys.create(tenant, f"{who} laptop", role, person=who)
        made[who] = new.key
        made[f"{who}_person"] = new.record.person_id
        made[f"{who}_key"] = new.record.id
    return made


async def audit_actions(db: asyncpg.Connection, tenant: str) -> list[dict[str, Any]]:
    async with db.transaction():
        await db.execute(f"SET LOCAL app.tenant_id = '{tenant}'")
        await db.execute("SET LOCAL app.every_person = 'on'")
        rows = await db.fetch(
            "SELECT action, actor_key, actor_role, detail FROM audit_log"
            " WHERE action LIKE 'oauth_%' ORDER BY at, id"
        )
    return [dict(r) for r in rows]


async def test_the_sdk_client_registers_is_approved_refreshes_and_is_revoked(
    base: str, people: dict[str, Any], db: asyncpg.Connection
) -> None:
    browser, storage = Browser(base, people["Ada"]), Kept()
    oauth = sdk_client(base, browser, storage)
    async with connected(base, oauth) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"remember", "search_memories", "store_memory"} <= tools
        # One consent: registered by RFC 7591, with a secret the server keeps as a hash.
        assert len(browser.consent_pages) == 1
        assert storage.client is not None and storage.client.client_secret
        stored = await db.fetchrow(
            "SELECT secret_hash, metadata FROM oauth_clients WHERE id = $1",
            storage.client.client_id,
        )
        assert stored["secret_hash"] != storage.client.client_secret
        assert json.loads(stored["metadata"])["client_name"] == "SDK test client"
        page = browser.pages_seen[0]
        assert "SDK test client" in page and REDIRECT in page and "its own claim" in page
        # The code came back with this server as its issuer (RFC 9207).
        assert query_of(browser.sent_to)["iss"] == base

        remembered = await client.call_tool(
            "remember",
            {"text": "Deploys go out on Tuesdays after the freeze", "source_repo": "acme/api"},
        )
        assert not remembered.is_error, remembered
        grant = await db.fetchrow("SELECT * FROM oauth_grants")
        assert (grant["tenant_id"], grant["person_id"], grant["role"]) == (
            "team", people["Ada_person"], "agent",
        )  # fmt: skip
        assert grant["granted_by_key"] == people["Ada_key"]
        assert grant["resource"] == f"{base}/mcp"
        memory = await db.fetchrow(
            "SELECT tenant_id, person_id, created_by_key FROM memories"
            " WHERE content LIKE 'Deploys%'"
        )
        # Filed under the person who approved it, written by the connection (its grant).
        assert dict(memory) == {
            "tenant_id": "team", "person_id": people["Ada_person"], "created_by_key": grant["id"],
        }  # fmt: skip

        # A refresh: the client's token is due, it refreshes (rotating the refresh token).
        before = storage.tokens
        assert before is not None and before.refresh_token
        oauth.context.token_expiry_time = 1.0  # 1970: the client takes its token for expired
        await client.list_tools()
        after = storage.tokens
        assert after is not None and after.refresh_token
        assert after.access_token != before.access_token
        assert after.refresh_token != before.refresh_token
        assert len(browser.consent_pages) == 1  # no one was asked again
        async with httpx.AsyncClient(base_url=base) as http:
            replayed = await refresh(http, storage.client.model_dump(), before.refresh_token)
        # The rotated refresh token, presented again: refused, and the grant revoked; the
        # client's next call gets 401.
        assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"
        assert await db.fetchval("SELECT revoked_at IS NOT NULL FROM oauth_grants")
        async with httpx.AsyncClient(base_url=base) as http:
            after_revocation = await http.post("/mcp", **mcp_call(after.access_token))
        assert after_revocation.status_code == 401
        assert 'error="invalid_token"' in after_revocation.headers["www-authenticate"]
        actions = await audit_actions(db, "team")
        assert [a["action"] for a in actions] == ["oauth_grant", "oauth_refresh", "oauth_revoke"]
        assert actions[0]["actor_key"] == people["Ada_key"]  # the person approved
        assert actions[1]["actor_key"] == grant["id"]  # the client refreshed
        assert json.loads(actions[2]["detail"])["by"] == "a refresh token was used twice"


async def test_a_revocation_on_the_console_ends_the_clients_access_at_once(
    base: str, people: dict[str, Any], db: asyncpg.Connection
) -> None:
    browser, storage = Browser(base, people["Ada"]), Kept()
    async with connected(base, sdk_client(base, browser, storage)) as client:
        await client.list_tools()
    assert storage.tokens is not None
    token = storage.tokens.access_token
    async with httpx.AsyncClient(base_url=base) as http:
        assert (await http.post("/mcp", **mcp_call(token))).status_code == 200
        await sign_in(http, people["Ada"])
        listed = await http.get("/console/connections")
        grant_id = await db.fetchval("SELECT id FROM oauth_grants")
        assert "SDK test client" in listed.text and f"revoke-{grant_id}" in listed.text
        form = listed.text.split(f'action="/console/connections/{grant_id}/revoke"')[1]
        csrf = form.split('value="')[1].split('"')[0]
        revoked = await http.post(
            f"/console/connections/{grant_id}/revoke", data={"csrf_token": csrf}
        )
        assert revoked.status_code == 303
        refused = await http.post("/mcp", **mcp_call(token))
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert "revoked" in refused.json()["detail"]
    assert [a["action"] for a in await audit_actions(db, "team")] == [
        "oauth_grant", "oauth_revoke",
    ]  # fmt: skip


async def test_the_401_leads_to_the_metadata_and_keys_still_work(
    base: str, people: dict[str, Any]
) -> None:
    async with httpx.AsyncClient(base_url=base) as http:
        anonymous = await http.post("/mcp", **{**mcp_call(""), "headers": {}})
        resource_url = f"{base}/.well-known/oauth-protected-resource/mcp"
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"] == f'Bearer resource_metadata="{resource_url}"'
        resource = (await http.get(resource_url)).json()
        assert resource["resource"] == f"{base}/mcp"
        assert resource["authorization_servers"] == [base]
        server = (await http.get("/.well-known/oauth-authorization-server")).json()
        assert server["issuer"] == base
        assert server["code_challenge_methods_supported"] == ["S256"]
        assert server["client_id_metadata_document_supported"] is True
        assert server["registration_endpoint"] == f"{base}/register"
        # An API key on /mcp, as before.
        assert (await http.post("/mcp", **mcp_call(people["Ada"]))).status_code == 200
        # An access token is /mcp's only: the API takes keys.
        _, tokens = await connected_by_hand(base, people["Ada"])
        rest = await http.get(
            "/memories", headers={"Authorization": f"Bearer {tokens['access_token']}"}
        )
        assert rest.status_code == 401 and "/mcp only" in rest.json()["detail"]


# The refusals, each with its OAuth error.


async def test_a_redirect_uri_not_registered_is_refused_without_a_redirect(
    base: str, people: dict[str, Any]
) -> None:
    async with httpx.AsyncClient(base_url=base) as http:
        client = await register(http)
        _, challenge = pkce()
        url = authorization_url(client["client_id"], challenge).replace(
            "localhost%3A3030", "evil.example"
        )
        refused = await http.get(url)
        assert refused.status_code == 400  # shown to the person, never sent there
        assert refused.json()["error"] == "invalid_request"
        assert "not registered" in refused.json()["error_description"]
        # Registering one is refused too, unless https or this machine's loopback.
        bad = await http.post(
            "/register", json={"client_name": "x", "redirect_uris": ["http://evil.example/cb"]}
        )
        assert bad.status_code == 400 and bad.json()["error"] == "invalid_redirect_uri"
        script = await http.post(
            "/register", json={"client_name": "x", "redirect_uris": ["javascript:alert(1)"]}
        )
        assert script.status_code == 400
        huge = await http.post(
            "/register",
            json={"client_name": "x", "redirect_uris": [REDIRECT], "contacts": ["c" * 70_000]},
        )
        assert huge.status_code == 413


async def test_registering_in_a_loop_keeps_a_bounded_number_of_unapproved_clients(
    base: str, db: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anyone may register (RFC 7591), so the registrations no person approved are bounded:
    past the bound the oldest go. An approved client stays whatever its age."""
    monkeypatch.setattr("app.services.oauth.MAX_UNAPPROVED_CLIENTS", 3)
    keys = KeyService.on_connection(db)
    ada = (await keys.create("team", "ada laptop", "agent", person="Ada")).record
    async with httpx.AsyncClient(base_url=base) as http:
        approved = (await register(http))["client_id"]
        request = AuthorizationRequest(
            client_id=approved, client_name="Hand client", redirect_uri=REDIRECT,
            redirect_uri_explicit=True, code_challenge="x" * 43, state=None, scopes=[],
            resource=f"{base}/mcp", expires_at=datetime.now(UTC) + timedelta(minutes=5),
        )  # fmt: skip
        await OAuthRepository(db).add_grant("team", ada.person_id, ada.id, request, "agent")
        made = [(await register(http))["client_id"] for _ in range(5)]
    kept = {r["id"] for r in await db.fetch("SELECT id FROM oauth_clients")}
    assert kept == {approved, *made[-3:]}


@pytest.mark.parametrize(
    ("challenge", "method"), [(None, None), ("a" * 43, "plain")], ids=["no PKCE", "plain"]
)
async def test_pkce_is_s256_only(
    base: str, people: dict[str, Any], challenge: str | None, method: str | None
) -> None:
    async with httpx.AsyncClient(base_url=base) as http:
        client = await register(http)
        url = authorization_url(client["client_id"], None)
        if challenge is not None:
            url += f"&code_challenge={challenge}&code_challenge_method={method}"
        refused = await http.get(url)
    assert refused.status_code == 302
    assert refused.headers["location"].startswith(REDIRECT)
    told = query_of(refused.headers["location"])
    assert (told["error"], told["state"], told["iss"]) == ("invalid_request", "st-1", base)


async def test_a_code_used_twice_is_refused_and_revokes_what_it_gave(
    base: str, people: dict[str, Any], db: asyncpg.Connection
) -> None:
    async with httpx.AsyncClient(base_url=base) as http:
        client = await register(http)
        verifier, challenge = pkce()
        code = (await granted_code(base, people["Ada"], client["client_id"], challenge))["code"]
        wrong = await exchange(http, client, code, "x" * 43)
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        first = await exchange(http, client, code, verifier)
        assert first.status_code == 200, first.text
        again = await exchange(http, client, code, verifier)
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
        # Whoever replayed it may hold the tokens too: they end.
        refused = await http.post("/mcp", **mcp_call(first.json()["access_token"]))
    assert refused.status_code == 401
    actions = await audit_actions(db, "team")
    assert json.loads(actions[-1]["detail"])["by"] == "an authorization code was used twice"


async def test_a_token_for_another_resource_is_refused(base: str, people: dict[str, Any]) -> None:
    other = "https://elsewhere.example/mcp"
    async with httpx.AsyncClient(base_url=base) as http:
        client = await register(http)
        verifier, challenge = pkce()
        asked = await http.get(authorization_url(client["client_id"], challenge, resource=other))
        assert asked.status_code == 302
        assert query_of(asked.headers["location"])["error"] == "invalid_target"
        code = (await granted_code(base, people["Ada"], client["client_id"], challenge))["code"]
        refused = await exchange(http, client, code, verifier, resource=other)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_target"
        tokens = (await exchange(http, client, code, verifier, resource=f"{base}/mcp")).json()
        assert (await http.post("/mcp", **mcp_call(tokens["access_token"]))).status_code == 200
        again = await refresh(http, client, tokens["refresh_token"], resource=other)
        assert again.status_code == 400 and again.json()["error"] == "invalid_target"
    # The same token where this server is another resource (localhost, not 127.0.0.1).
    port = urlsplit(base).port
    async with httpx.AsyncClient(base_url=f"http://localhost:{port}") as http:
        elsewhere = await http.post("/mcp", **mcp_call(tokens["access_token"]))
    assert elsewhere.status_code == 401
    assert 'error="invalid_token"' in elsewhere.headers["www-authenticate"]
    assert f"issued for {base}/mcp" in elsewhere.json()["detail"]


async def test_an_expired_token_is_refused_and_the_refresh_token_gets_a_new_one(
    base: str, people: dict[str, Any], db: asyncpg.Connection
) -> None:
    client, tokens = await connected_by_hand(base, people["Ada"])
    await db.execute("UPDATE oauth_tokens SET expires_at = now() - interval '1 second'"
                     " WHERE kind = 'access'")  # fmt: skip
    async with httpx.AsyncClient(base_url=base) as http:
        expired = await http.post("/mcp", **mcp_call(tokens["access_token"]))
        assert expired.status_code == 401
        assert 'error="invalid_token"' in expired.headers["www-authenticate"]
        assert "expired" in expired.json()["detail"]
        renewed = await refresh(http, client, tokens["refresh_token"])
        assert renewed.status_code == 200, renewed.text
        again = await http.post("/mcp", **mcp_call(renewed.json()["access_token"]))
    assert again.status_code == 200


async def test_a_token_acts_in_its_own_tenant_only(
    base: str, people: dict[str, Any], db: asyncpg.Connection
) -> None:
    _, eves = await connected_by_hand(base, people["Eve"])
    async with httpx.AsyncClient(base_url=base) as http:
        for who, text in (("Ada", "Team secret plan lives here"),
                          ("Eve", "Other tenant secret plan lives here")):  # fmt: skip
            stored = await http.post(
                "/memories", json={"content": text, "source_repo": None},
                headers={"Authorization": f"Bearer {people[who]}"},
            )  # fmt: skip
            assert stored.status_code == 201
        found = await http.post(
            "/mcp",
            headers=mcp_call(eves["access_token"])["headers"],
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "search_memories",
                             "arguments": {"query": "secret plan", "format": "full"}}},
        )  # fmt: skip
        assert found.status_code == 200
        result = found.json()["result"]
        assert not result["isError"], result
        assert "Other tenant secret plan" in found.text
        assert "Team secret plan" not in found.text
        # Team's admin neither sees Eve's connection nor can revoke it.
        eve_grant = await db.fetchval("SELECT id FROM oauth_grants WHERE tenant_id = 'other'")
        await sign_in(http, people["Ada"])
        listed = await http.get("/console/connections")
        assert str(eve_grant) not in listed.text
        page = await http.get("/console/connections")
        csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
        refused = await http.post(
            f"/console/connections/{eve_grant}/revoke", data={"csrf_token": csrf}
        )
        assert refused.status_code == 404
        assert (await http.post("/mcp", **mcp_call(eves["access_token"]))).status_code == 200


async def test_the_role_granted_is_at_most_the_persons_and_never_admin(
    base: str, people: dict[str, Any], db: asyncpg.Connection
) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        client = await register(http)
        _, challenge = pkce()
        page = await consent_page(
            http, people["Bob"], authorization_url(client["client_id"], challenge)
        )
        shown = await http.get(page)
        assert '<option value="reader">' in shown.text and 'value="agent"' not in shown.text
        refused = await decide(http, page, "approve", "agent")
        assert refused.status_code == 403
        reader = await decide(http, page, "approve", "reader")
        assert reader.status_code == 303
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        _, challenge = pkce()
        page = await consent_page(
            http, people["Ada"], authorization_url(client["client_id"], challenge)
        )
        assert (await decide(http, page, "approve", "admin")).status_code == 403
        denied = await decide(http, page, "deny")
        assert query_of(denied.headers["location"])["error"] == "access_denied"
        # Decided once: the page is gone.
        assert (await http.get(page)).status_code == 404
    roles = [r["role"] for r in await db.fetch("SELECT role FROM oauth_grants")]
    assert roles == ["reader"]


async def test_the_consent_page_lets_its_form_lead_to_the_client_only(
    base: str, people: dict[str, Any]
) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        client = await register(http)
        _, challenge = pkce()
        page = await consent_page(
            http, people["Ada"], authorization_url(client["client_id"], challenge)
        )
        shown = await http.get(page)
    policy = shown.headers["content-security-policy"]
    assert "form-action 'self' http://localhost:3030;" in policy
    assert "frame-ancestors 'none'" in policy


# Registration by Client ID Metadata Document.


@asynccontextmanager
async def client_document(tmp_path: Path, **changes: Any) -> AsyncIterator[str]:
    """A client's metadata document over https on localhost (with `changes`); its URL, the
    client_id."""
    _, certificate, key = localhost_certificate(tmp_path)
    served: dict[str, Any] = {}

    async def handler(request: Request) -> JSONResponse:
        return JSONResponse(served["document"])

    app = Starlette(routes=[Route("/oauth/client.json", handler)])

    def config(port: int) -> uvicorn.Config:
        return uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_config=None,
                              ssl_certfile=str(certificate), ssl_keyfile=str(key))  # fmt: skip

    async with on_loopback(config) as port:
        url = f"https://localhost:{port}/oauth/client.json"
        served["document"] = {
            "client_id": url, "client_name": "Documented client",
            "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", **changes,
        }  # fmt: skip
        yield url


async def test_the_sdk_client_registers_by_its_metadata_document(
    base: str, people: dict[str, Any], db: asyncpg.Connection, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    async with client_document(tmp_path) as url:
        browser, storage = Browser(base, people["Ada"]), Kept()
        async with connected(base, sdk_client(base, browser, storage, url)) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
    assert "remember" in tools
    assert storage.client is not None and storage.client.client_id == url
    assert await db.fetchval("SELECT count(*) FROM oauth_clients") == 0  # nothing registered
    page = browser.pages_seen[0]
    assert "Documented client" in page and "described by a document at <strong>localhost" in page
    assert await db.fetchval("SELECT client_id FROM oauth_grants") == url


async def test_a_sign_in_leads_back_to_this_console_only(base: str, people: dict[str, Any]) -> None:
    for outside in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        async with httpx.AsyncClient(base_url=base) as http:
            signed = await sign_in(http, people["Ada"], outside)
        assert (signed.status_code, signed.headers["location"]) == (303, "/"), outside


async def test_open_mode_grants_nothing(base: str) -> None:
    """With no key, no one could be accountable for a grant, and the first key would not
    end it: connecting waits for a key."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        client = await register(http)
        _, challenge = pkce()
        asked = await http.get(authorization_url(client["client_id"], challenge))
        page = asked.headers["location"]
        shown = await http.get(page)  # open mode: everyone is signed in
        assert shown.status_code == 200
        refused = await decide(http, page, "approve", "agent")
    assert refused.status_code == 403 and "open mode" in refused.text


async def test_a_document_that_is_no_client_metadata_is_an_unknown_client(
    base: str, people: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    _, challenge = pkce()
    async with (
        client_document(tmp_path, logo_uri="not a URL") as url,
        httpx.AsyncClient(base_url=base) as http,
    ):
        refused = await http.get(authorization_url(url, challenge))
    assert refused.status_code == 400  # not a 500
    assert refused.json()["error"] == "invalid_request"
    assert "not found" in refused.json()["error_description"]
