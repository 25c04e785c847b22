"""One filter at every door that reads memories by one (FilterIn, FilterRequest): a list takes
each field a search takes, and keeps the same memories."""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

REPO = "acme/one-filter"


async def test_a_list_keeps_what_a_search_with_the_same_filter_keeps(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    stored = {}
    for trust, relevance in (("agent", 1.0), ("user", 1.0), ("user", 0.2)):
        content = f"Roll the canary first, said by {trust} at relevance {relevance}"
        body = {"content": content, "source_repo": REPO, "trust_level": trust}
        response = await api.post("/memories", json=body)
        assert response.status_code == 201, response.text
        stored[content] = response.json()["memory"]["id"]
        await db.execute(
            "UPDATE memories SET relevance_score = $1 WHERE id = $2::uuid",
            relevance,
            stored[content],
        )
    kept: dict[str, Any] = {"source_repo": REPO, "min_trust": "user", "min_relevance": 0.5}
    listed = await api.get("/memories", params=kept)
    searched = await api.get("/search", params={"q": "canary", **kept})
    assert listed.status_code == searched.status_code == 200, (listed.text, searched.text)
    by_list = {m["id"] for m in listed.json()["memories"]}
    by_search = {r["memory"]["id"] for r in searched.json()["results"]}
    assert by_list == by_search == {stored["Roll the canary first, said by user at relevance 1.0"]}
