"""The console as a test signs in to it over HTTP: the form's CSRF token, a sign-in with a
key, and a key of each role in one tenant (a fixture: import it where it is used)."""

from __future__ import annotations

import re

import asyncpg
import httpx
import pytest

from app.services.keys import KeyService


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


async def signed_in(http: httpx.AsyncClient, key: str) -> None:
    form = await http.get("/console/sign-in")
    answer = await http.post(
        "/console/sign-in", data={"api_key": key, "csrf_token": csrf_of(form.text)}
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text


@pytest.fixture
async def keys(served: str, db: asyncpg.Connection) -> dict[str, str]:
    service = KeyService.on_connection(db)
    return {
        role: (await service.create("team", f"{role}-key", role)).key
        for role in ("admin", "agent", "reader")
    }
