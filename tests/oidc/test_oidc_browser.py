"""Signing in with the identity provider in a real browser (Debian's headless Chromium): the
sign-in page's button, the provider's own login and consent pages on another site
(127.0.0.1 against the server's localhost), and back. The console's session cookie is
SameSite=Strict, which a browser leaves off a redirect chain another site started: the
callback answers with a page of this site that leads on, and the next page is signed in.
Set SCREENSHOTS_DIR to keep pictures of the pages."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.domain.oidc import CALLBACK_PATH
from app.embeddings.base import Embedder
from app.main import create_app
from tests.conftest import EMPTY_TABLES, running, serving
from tests.helpers.browser import follow, needs_chromium, shot
from tests.helpers.oidc_provider import oidc_settings, person_with_key, provider
from tests.server import free_port

pytestmark = needs_chromium


@pytest.fixture
async def oidc_served(
    settings: Settings, embedder: Embedder, database_url: str, db: asyncpg.Connection
) -> AsyncIterator[tuple[str, int]]:
    """The server at http://localhost:PORT, its provider at http://127.0.0.1:ITS_PORT."""
    provider_port = free_port()
    issuer = f"http://127.0.0.1:{provider_port}"
    application: FastAPI = create_app(
        oidc_settings(settings, issuer), embedder=embedder, database_url=database_url
    )
    async with running(application), serving(application) as base:
        server = base.replace("127.0.0.1", "localhost")
        async with provider(server + CALLBACK_PATH, provider_port, "127.0.0.1"):
            yield server, provider_port
    await db.execute(EMPTY_TABLES)


async def test_a_person_signs_in_with_the_provider_in_the_browser(
    oidc_served: tuple[str, int], db: asyncpg.Connection, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    server, provider_port = oidc_served
    await person_with_key(db, "ada@example.com", "admin")

    def journey() -> None:
        browser.get(server + "/console/sign-in")
        follow(browser, browser.find_element(By.ID, "sign-in-with-provider"))
        assert browser.current_url.startswith(f"http://127.0.0.1:{provider_port}/interaction/")
        browser.find_element(By.NAME, "login").send_keys("ada")
        browser.find_element(By.NAME, "password").send_keys("any")
        shot(browser, "oidc-provider-login")
        follow(browser, browser.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        shot(browser, "oidc-provider-consent")
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        # The callback's page, then its refresh to the search page, signed in.
        WebDriverWait(browser, 30).until(lambda b: b.current_url == server + "/")
        shot(browser, "oidc-signed-in")

    await asyncio.to_thread(journey)
    assert browser.find_element(By.ID, "role").text == "admin"
    assert "Sign in" not in browser.title
