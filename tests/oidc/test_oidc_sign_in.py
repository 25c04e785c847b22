"""Console sign-in through a real OpenID provider: the certified `oidc-provider` from npm,
run by node on a loopback port (tests/oidc/provider.mjs, installed by scripts/oidc-provider),
its own login and consent pages driven over HTTP. The server under test fetches the
provider's discovery document and keys, exchanges the code with PKCE and verifies the ID
token as it would with Keycloak, Google or Entra. (The ID token refusals one by one, with
tokens built to be wrong: tests/domain/test_oidc.py.)"""

from __future__ import annotations

import html
import json
import re
from collections.abc import AsyncIterator
from urllib.parse import quote, urljoin, urlsplit

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.console.auth import KEY_COOKIE
from app.console.oidc import FLOW_COOKIE
from app.domain.oidc import CALLBACK_PATH
from app.embeddings.base import Embedder
from app.main import create_app
from app.services.keys import KeyService
from app.services.people import PeopleService
from tests.conftest import EMPTY_TABLES, running
from tests.helpers.console import csrf_of
from tests.helpers.oidc_provider import oidc_settings, person_with_key, provider
from tests.oauth_flow import REDIRECT, authorization_url, decide, pkce, register
from tests.server import free_port

APP = "http://localhost"


@pytest.fixture(scope="module")
async def issuer() -> AsyncIterator[str]:
    """The provider, listening, until the module's tests end."""
    async with provider(APP + CALLBACK_PATH, free_port()) as url:
        yield url


@pytest.fixture
async def oidc_app(
    settings: Settings, issuer: str, embedder: Embedder, database_url: str, db: asyncpg.Connection
) -> AsyncIterator[FastAPI]:
    """A server that signs people in with the provider, its tables emptied after."""
    application = create_app(oidc_settings(settings, issuer), embedder=embedder,
                             database_url=database_url)  # fmt: skip
    async with running(application):
        yield application
    await db.execute(EMPTY_TABLES)


def browser(application: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=application), base_url=APP)


async def at_the_provider(url: str, login: str) -> str:
    """Through the provider's own login and consent pages as `login`: the URL it sends the
    browser back to (this server's callback, with the code and state, or an error)."""
    async with httpx.AsyncClient(timeout=30) as idp:
        for _ in range(12):
            if url.startswith(APP + CALLBACK_PATH):
                return url
            answer = await idp.get(url)
            if answer.is_redirect:
                url = urljoin(url, answer.headers["location"])
                continue
            assert answer.status_code == 200, answer.text
            form = re.search(r'<form[^>]*action="([^"]+)"', answer.text)
            assert form, answer.text
            fields = dict(
                re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', answer.text)
            )
            if 'name="login"' in answer.text:
                fields |= {"login": login, "password": "any"}
            else:  # the consent page
                fields |= {"prompt": "consent"}
            posted = await idp.post(urljoin(url, html.unescape(form.group(1))), data=fields)
            assert posted.is_redirect, posted.text
            url = urljoin(url, posted.headers["location"])
    raise AssertionError("the provider never sent the browser back")


async def sign_in_with_provider(
    http: httpx.AsyncClient, login: str, then: str = ""
) -> httpx.Response:
    """The sign-in page's button, the provider's pages, and the callback: its answer."""
    page = await http.get("/console/sign-in", params={"next": then} if then else None)
    button = re.search(r'id="sign-in-with-provider"\s+href="([^"]+)"', page.text)
    assert button and "Sign in with Acme SSO" in page.text, page.text
    started = await http.get(html.unescape(button.group(1)))
    assert started.status_code == 303, started.text
    back = await at_the_provider(started.headers["location"], login)
    return await http.get(back.removeprefix(APP))


async def test_signing_in_names_the_person_and_gives_their_keys_highest_role(
    oidc_app: FastAPI, db: asyncpg.Connection
) -> None:
    await person_with_key(db, "ada@example.com", "reader")
    await person_with_key(db, "ada@example.com", "admin")
    async with browser(oidc_app) as http:
        answer = await sign_in_with_provider(http, "ada")
        assert answer.status_code == 200, answer.text
        assert "Signed in as <strong>ada@example.com</strong> (admin)" in answer.text
        # The cookie holds a session id, not a key; the flow's cookie is gone.
        assert http.cookies[KEY_COOKIE].startswith("amsession_")
        set_cookies = answer.headers.get_list("set-cookie")
        assert any(c.startswith(f"{FLOW_COOKIE}=") and "Max-Age=0" in c for c in set_cookies)
        session_cookie = next(c for c in set_cookies if c.startswith(KEY_COOKIE))
        assert "HttpOnly" in session_cookie and "SameSite=strict" in session_cookie
        home = await http.get("/")
        assert home.status_code == 200 and 'id="role">admin<' in home.text
        # Stored hashed: the id the browser holds is nowhere in the table.
        stored = await db.fetch("SELECT id_hash, role FROM console_sessions")
        assert [r["role"] for r in stored] == ["admin"]
        assert http.cookies[KEY_COOKIE] not in stored[0]["id_hash"]
        # In the audit trail, for the admin to see (on the console's Audit page too).
        entry = await db.fetchrow(
            "SELECT detail, actor_person FROM audit_log WHERE action = 'console_sign_in'"
        )
        assert entry is not None and json.loads(entry["detail"])["name"] == "ada@example.com"
        assert (await http.get("/console/audit")).text.count("console_sign_in") >= 1


async def test_someone_not_on_the_team_is_refused_saying_how_to_be_added(
    oidc_app: FastAPI, db: asyncpg.Connection
) -> None:
    await person_with_key(db, "ada@example.com", "agent")
    async with browser(oidc_app) as http:
        answer = await sign_in_with_provider(http, "stranger")
        assert answer.status_code == 401
        assert "no one named &#39;stranger@example.com&#39; is on this server" in answer.text
        assert "agent-memory people add stranger@example.com" in answer.text
        assert KEY_COOKIE not in http.cookies
    assert await db.fetchval("SELECT count(*) FROM console_sessions") == 0


async def test_an_unverified_email_names_no_one(oidc_app: FastAPI, db: asyncpg.Connection) -> None:
    await person_with_key(db, "eve@example.com", "admin")
    async with browser(oidc_app) as http:
        answer = await sign_in_with_provider(http, "eve")
    assert answer.status_code == 401 and "not verified your email" in answer.text


async def test_a_removed_person_cannot_sign_in_and_is_signed_out_on_the_next_click(
    oidc_app: FastAPI, db: asyncpg.Connection
) -> None:
    await person_with_key(db, "ada@example.com", "agent")
    async with browser(oidc_app) as http:
        assert (await sign_in_with_provider(http, "ada")).status_code == 200
        assert (await http.get("/")).status_code == 200
        people = PeopleService.on_connection(db)
        await people.remove(await people.named("team", "ada@example.com"))
        next_click = await http.get("/")
        assert next_click.status_code == 303
        assert next_click.headers["location"] == "/console/sign-in"
    async with browser(oidc_app) as http:
        again = await sign_in_with_provider(http, "ada")
        assert again.status_code == 401 and "no one named" in again.text


async def test_a_person_whose_last_key_is_revoked_is_signed_out_and_cannot_sign_in(
    oidc_app: FastAPI, db: asyncpg.Connection
) -> None:
    key_id = await person_with_key(db, "ada@example.com", "agent")
    async with browser(oidc_app) as http:
        assert (await sign_in_with_provider(http, "ada")).status_code == 200
        await KeyService.on_connection(db).revoke("team", key_id, force=True)
        assert (await http.get("/")).status_code == 303
    async with browser(oidc_app) as http:
        refused = await sign_in_with_provider(http, "ada")
    assert refused.status_code == 401 and "ada@example.com has no active key" in refused.text


async def test_a_session_survives_a_restart_and_sign_out_ends_it(
    oidc_app: FastAPI,
    settings: Settings,
    issuer: str,
    embedder: Embedder,
    database_url: str,
    db: asyncpg.Connection,
) -> None:
    await person_with_key(db, "ada@example.com", "agent")
    async with browser(oidc_app) as http:
        assert (await sign_in_with_provider(http, "ada")).status_code == 200
        cookies = dict(http.cookies)
    # Another server on the same database (a restart, or a second worker): the same cookie.
    restarted = create_app(oidc_settings(settings, issuer), embedder=embedder,
                           database_url=database_url)  # fmt: skip
    async with running(restarted), browser(restarted) as http:
        http.cookies.update(cookies)
        home = await http.get("/")
        assert home.status_code == 200 and 'id="role">agent<' in home.text
        out = await http.post("/console/sign-out", data={"csrf_token": csrf_of(home.text)})
        assert out.status_code == 303
        assert await db.fetchval("SELECT count(*) FROM console_sessions") == 0
    # The id a browser (or a thief of its cookie) kept is worth nothing now.
    async with browser(oidc_app) as http:
        http.cookies.update(cookies)
        assert (await http.get("/")).status_code == 303


async def test_a_callback_not_started_in_this_browser_is_refused(
    oidc_app: FastAPI, db: asyncpg.Connection
) -> None:
    await person_with_key(db, "ada@example.com", "agent")
    async with browser(oidc_app) as http:
        started = await http.get("/console/oidc/start")
        back = await at_the_provider(started.headers["location"], "ada")
    # Another browser (no flow cookie), handed the code: refused, no session.
    async with browser(oidc_app) as other:
        answer = await other.get(back.removeprefix(APP))
        assert answer.status_code == 401 and "not started in this browser" in answer.text
        forged = back.replace("state=", "state=x")
        other.cookies.set(FLOW_COOKIE, "some other secret", path=CALLBACK_PATH)
        answer = await other.get(forged.removeprefix(APP))
        assert answer.status_code == 401 and "state does not match" in answer.text
    assert await db.fetchval("SELECT count(*) FROM console_sessions") == 0


async def test_the_provider_refusing_is_said_on_the_sign_in_page(oidc_app: FastAPI) -> None:
    async with browser(oidc_app) as http:
        answer = await http.get(
            CALLBACK_PATH, params={"error": "access_denied", "error_description": "no thanks"}
        )
    assert answer.status_code == 401
    assert "did not sign you in (access_denied: no thanks)" in answer.text


async def test_the_consent_page_takes_a_person_signed_in_with_the_provider(
    oidc_app: FastAPI, db: asyncpg.Connection
) -> None:
    await person_with_key(db, "ada@example.com", "agent")
    async with browser(oidc_app) as http:
        client = await register(http)
        asked = await http.get(authorization_url(client["client_id"], pkce()[1]))
        consent = asked.headers["location"]
        first = await http.get(consent)
        assert first.headers["location"] == "/console/sign-in?next=" + quote(consent, safe="")
        signed = await sign_in_with_provider(http, "ada", then=consent)
        assert signed.status_code == 200
        assert f'url={consent}"' in signed.text  # leads on to the consent page
        decided = await decide(http, consent, "approve", "agent")
        assert decided.status_code == 303 and decided.headers["location"].startswith(REDIRECT)
    grant = await db.fetchrow("SELECT person_id, role FROM oauth_grants")
    ada = await db.fetchval("SELECT id FROM people WHERE name = 'ada@example.com'")
    assert grant is not None and (grant["person_id"], grant["role"]) == (ada, "agent")


async def test_without_an_issuer_the_console_takes_keys_only(client: httpx.AsyncClient) -> None:
    page = await client.get("/console/sign-in")
    assert "sign-in-with-provider" not in page.text
    assert (await client.get("/console/oidc/start")).status_code == 404
    assert urlsplit(str(page.url)).path == "/console/sign-in"
