"""since and until on every door that reads memories by a filter: search (both sides and the
empty query), list, export; the window is [since, until) over when a memory was stored."""

from __future__ import annotations

import json
from typing import Any

import asyncpg
import httpx
import pytest

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

REPO = "acme/time"
AGES = {"thirty days old": 30, "five days old": 5, "fresh": 0}  # content -> age in days


@pytest.fixture
async def dated(api: httpx.AsyncClient, db: asyncpg.Connection) -> None:
    for content, days in AGES.items():
        response = await api.post(
            "/memories",
            json={"content": f"Deploy note, {content}: roll the canary first", "source_repo": REPO},
        )
        assert response.status_code == 201, response.text
        await db.execute(
            "UPDATE memories SET created_at = now() - make_interval(days => $1)"
            " WHERE id = $2::uuid",
            days,
            response.json()["memory"]["id"],
        )


def ages(memories: list[dict[str, Any]]) -> set[str]:
    return {next(c for c in AGES if c in m["content"]) for m in memories}


@pytest.mark.usefixtures("dated")
@pytest.mark.parametrize(
    ("window", "kept"),
    [
        ({"since": "7d"}, {"five days old", "fresh"}),
        ({"until": "7 days ago"}, {"thirty days old"}),
        ({"since": "last week", "until": "yesterday"}, {"five days old"}),
        ({}, set(AGES)),
    ],
)
async def test_search_and_list_keep_what_was_stored_in_the_window(
    api: httpx.AsyncClient, window: dict[str, str], kept: set[str]
) -> None:
    query: dict[str, Any] = {"q": "deploy canary", "source_repo": REPO, "floor": False, **window}
    found = await api.get("/search", params=query)
    assert found.status_code == 200, found.text
    assert ages([r["memory"] for r in found.json()["results"]]) == kept
    posted = await api.post("/search", json=query)
    assert ages([r["memory"] for r in posted.json()["results"]]) == kept
    newest = await api.get("/search", params={**query, "q": ""})  # the empty query: a list
    assert ages([r["memory"] for r in newest.json()["results"]]) == kept
    listed = await api.get("/memories", params={"source_repo": REPO, **window})
    assert listed.status_code == 200, listed.text
    assert ages(listed.json()["memories"]) == kept


@pytest.mark.usefixtures("dated")
async def test_an_export_holds_the_window(api: httpx.AsyncClient) -> None:
    exported = await api.get("/memories/export", params={"source_repo": REPO, "since": "7d"})
    assert exported.status_code == 200, exported.text
    header, *lines = [json.loads(line) for line in exported.text.splitlines()]
    memories = [line for line in lines if "session" not in line]
    assert header["count"] == 2 and ages(memories) == {"five days old", "fresh"}


@pytest.mark.parametrize(
    ("window", "field"),
    [
        ({"since": "when the build broke"}, "since"),
        ({"until": "x" * 65}, "until"),
        ({"since": "yesterday", "until": "7d"}, "since"),
    ],
)
async def test_a_window_that_is_not_one_is_refused_at_every_door(
    api: httpx.AsyncClient, window: dict[str, str], field: str
) -> None:
    for method, path, params in (
        ("GET", "/search", {"q": "deploy", **window}),
        ("GET", "/memories", window),
        ("GET", "/memories/export", window),
    ):
        refused = await api.request(method, path, params=params)
        assert refused.status_code == 422, (path, refused.text)
        assert field in refused.text, (path, refused.text)
