"""A client's consent in a real browser (Debian's headless Chromium): the authorization URL
leads to the sign-in, the sign-in back to the consent page, and Approve takes the browser
on to the client's redirect URI with the code. The page's policy allows that redirect and
no other (a browser checks form-action on the redirect after a form). Set SCREENSHOTS_DIR
to keep a picture of the page."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.services.keys import KeyService
from tests.conftest import on_loopback
from tests.helpers.browser import follow, needs_chromium, shot
from tests.oauth_flow import authorization_url, pkce, query_of

pytestmark = needs_chromium


async def test_a_person_approves_a_client_in_the_browser(
    served: str, db: asyncpg.Connection, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    key = (
        await KeyService.on_connection(db).create("team", "ada laptop", "agent", person="Ada")
    ).key
    arrived: list[str] = []

    async def callback(request: Request) -> PlainTextResponse:
        arrived.append(str(request.url))
        return PlainTextResponse("back in the app")

    app = Starlette(routes=[Route("/callback", callback)])

    def config(port: int) -> uvicorn.Config:
        return uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_config=None)

    async with on_loopback(config) as port, httpx.AsyncClient(base_url=served) as http:
        redirect = f"http://127.0.0.1:{port}/callback"
        registered = await http.post(
            "/register", json={"client_name": "Browser client", "redirect_uris": [redirect],
                               "token_endpoint_auth_method": "none"},
        )  # fmt: skip
        client = registered.json()
        _, challenge = pkce()
        url = served + authorization_url(client["client_id"], challenge, redirect)

        def journey() -> None:
            browser.get(url)
            assert "/console/sign-in?next=" in browser.current_url
            browser.find_element(By.ID, "api_key").send_keys(key)
            follow(browser, browser.find_element(By.ID, "sign-in"))
            assert "/console/oauth/" in browser.current_url
            assert browser.find_element(By.ID, "client-name").text == "Browser client"
            assert browser.find_element(By.ID, "redirect-uri").text == redirect
            Select(browser.find_element(By.ID, "grant-role")).select_by_value("reader")
            shot(browser, "consent")
            follow(browser, browser.find_element(By.ID, "approve"))

        await asyncio.to_thread(journey)
    assert browser.current_url.startswith(redirect), browser.current_url
    assert len(arrived) == 1
    told = query_of(arrived[0])
    assert told["state"] == "st-1" and told["iss"] == served and told["code"]
    assert await db.fetchval("SELECT role FROM oauth_grants") == "reader"
