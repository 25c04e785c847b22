"""Results an agent can afford: compact hits within content + 100 characters, packed
best-first within a token budget, only what is relevant, and an empty query that says it
lists the newest."""

from __future__ import annotations

import asyncio
import json
import sys

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp_types import TextContent

from app.domain.agent_text import quoted
from app.domain.compact import COMPACT_OVERHEAD, CompactHit, pack
from app.domain.text import estimate_tokens


def compact(id_: int, content: str, context: str | None = None) -> CompactHit:
    return CompactHit(
        id=f"00000000-0000-0000-0000-{id_:012d}",
        type="decision",
        score=0.5,
        age="3d",
        tags=("ci", "postgres"),
        content=content,
        context=context,
    )


def test_a_compact_hit_stays_within_content_plus_the_overhead() -> None:
    for context in (None, "short", "a long situation " * 40):
        hit = compact(1, "Pin the Postgres major version in CI images", context)
        line = hit.line(10)
        assert len(line) <= len(quoted(hit.content)) + COMPACT_OVERHEAD, line
        assert hit.id in line and hit.content in line
    assert '(context: "short")' in compact(1, "x" * 30, "short").line(1)


def test_the_budget_packs_exactly_what_fits_and_reports_the_rest() -> None:
    hits = [compact(i, f"memory number {i} " * 10) for i in range(6)]
    costs = [estimate_tokens(h.line(i + 1)) + 1 for i, h in enumerate(hits)]
    packed = pack(hits, max_tokens=costs[0] + costs[1] + costs[2] - 1)
    assert (len(packed.lines), packed.left_out) == (2, 4)
    assert pack(hits, max_tokens=sum(costs)).left_out == 0
    # The best match is shown even when it alone is over the budget.
    assert (len(pack(hits, max_tokens=1).lines), pack(hits, max_tokens=1).left_out) == (1, 5)


async def test_mcp_search_answers_compact_text_once(served: str) -> None:
    async with httpx.AsyncClient(base_url=served) as http:
        for n in range(3):
            await http.post(
                "/memories",
                json={
                    "content": f"Retry flaky integration test number {n} once before failing",
                    "tags": ["ci", "tests"],
                    "context": "the nightly build kept failing on a timing-dependent test",
                    "source_repo": None,
                },
            )
    async with Client(f"{served}/mcp") as client:
        result = await client.call_tool("search_memories", {"query": "flaky test retry"})
        assert result.structured_content is None  # not sent twice
        (content,) = result.content
        assert isinstance(content, TextContent)
        assert content.text.startswith("3 result(s)")
        assert "content_hash" not in content.text and "tenant_id" not in content.text
        entries = content.text.split("\n")[1:]
        starts = [i for i, line in enumerate(entries) if line[:3] in ("1. ", "2. ", "3. ")]
        for start, end in zip(starts, [*starts[1:], len(entries)], strict=True):
            entry = "\n".join(entries[start:end])
            memory_line = entries[start + 1]
            assert len(entry) <= len(memory_line) + COMPACT_OVERHEAD

        budgeted = await client.call_tool(
            "search_memories", {"query": "flaky test retry", "max_tokens": 60}
        )
        text = budgeted.content[0].text  # type: ignore[union-attr]
        assert text.startswith("1 result(s); 2 more left out to fit max_tokens=60")

        full = await client.call_tool("search_memories", {"query": "flaky", "format": "full"})
        rows = json.loads(full.content[0].text)["results"]  # type: ignore[union-attr]
        assert {"content_hash", "tenant_id"} <= set(rows[0]["memory"])


async def test_results_far_below_the_best_are_left_out_unless_asked_for(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch, db: asyncpg.Connection
) -> None:
    await api.post(
        "/memories",
        json={"content": "Deploys go out with the blue-green script", "source_repo": None},
    )
    await api.post(
        "/memories",
        json={"content": "The cafeteria closes at three on Fridays", "source_repo": None},
    )
    monkeypatch.setattr(app.state.runtime.settings, "relevance_floor_ratio", 0.5)
    floored = (await api.get("/search", params={"q": "blue-green deploy script"})).json()
    assert [r["memory"]["content"] for r in floored["results"]] == [
        "Deploys go out with the blue-green script"
    ]
    assert floored["below_floor"] == 1
    # What was left out was not shown to anyone: it is not counted as used.
    accesses = (
        "SELECT m.content, coalesce(a.access_count, 0) FROM memories m"
        " LEFT JOIN memory_access a ON a.memory_id = m.id ORDER BY m.content"
    )
    assert [tuple(r) for r in await db.fetch(accesses)] == [
        ("Deploys go out with the blue-green script", 1),
        ("The cafeteria closes at three on Fridays", 0),
    ]
    everything = await api.get("/search", params={"q": "blue-green deploy script", "floor": False})
    assert len(everything.json()["results"]) == 2
    # An absolute floor above every score: nothing comes back, and the answer says why.
    monkeypatch.setattr(app.state.runtime.settings, "relevance_floor_min", 0.99)
    nothing = (await api.get("/search", params={"q": "blue-green deploy script"})).json()
    assert (nothing["results"], nothing["below_floor"]) == ([], 2)


async def test_a_query_nothing_answers_comes_back_empty_at_every_door(served: str) -> None:
    """The issue's case: with only Postgres and deploy notes stored, "pnpm" used to bring
    back the nearest at a score of 0.04. The absolute floor (RELEVANCE_FLOOR_MIN, on the
    similarity) leaves it out, and the answer says there was no good match: over HTTP, over
    MCP, and on the command line. A question the notes do answer still finds them."""
    notes = [
        "Pin the Postgres major version in the CI images",
        "Deploys go out with the blue-green script after the smoke tests",
        "Vacuum the events table nightly; autovacuum falls behind on it",
    ]
    async with httpx.AsyncClient(base_url=served) as http:
        for note in notes:
            await http.post("/memories", json={"content": note, "source_repo": "acme/api"})
        scope = {"source_repo": "acme/api"}
        answer = (await http.get("/search", params={"q": "pnpm"} | scope)).json()
        assert answer["results"] == [] and answer["below_floor"] >= 1
        assert answer["note"] == "no good match: no memory matches this query well"
        weaker = (await http.get("/search", params={"q": "pnpm", "floor": "false"} | scope)).json()
        assert len(weaker["results"]) == answer["below_floor"]
        found = (await http.get("/search", params={"q": "postgres version in CI"} | scope)).json()
        assert found["results"][0]["memory"]["content"] == notes[0]
    async with Client(f"{served}/mcp") as client:
        result = await client.call_tool("search_memories", {"query": "pnpm"} | scope)
        [text] = [c.text for c in result.content if isinstance(c, TextContent)]
        assert text.startswith("0 result(s);") and "no good match" in text
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "search", "pnpm", "--source-repo", "acme/api",
        "--url", served, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert (process.returncode, out) == (0, b"")
    assert err.decode().startswith('no good match in "acme/api" and the global memories')


async def test_an_empty_query_lists_the_newest_and_says_so(api: httpx.AsyncClient) -> None:
    for n in range(3):
        await api.post("/memories", json={"content": f"note {n}", "source_repo": "r"})
    answer = (await api.get("/search", params={"q": "", "source_repo": "r", "limit": 2})).json()
    assert [r["memory"]["content"] for r in answer["results"]] == ["note 2", "note 1"]
    assert answer["note"].startswith("empty query: the most recent memories")
    assert all(r["score"] == 0 for r in answer["results"])


async def test_rest_offers_the_compact_form_within_a_budget(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    for n in range(4):
        await api.post(
            "/memories",
            json={
                "content": f"Cache invalidation rule number {n} for the product pages",
                "source_repo": None,
            },
        )
    full = (await api.get("/search", params={"q": "cache invalidation rule"})).json()
    assert {"content_hash", "tenant_id"} <= set(full["results"][0]["memory"])
    compact = await api.get(
        "/search",
        params={"q": "cache invalidation rule", "format": "compact", "max_tokens": 50},
    )
    body = compact.json()
    assert set(body["results"][0]) == {
        "id",
        "type",
        "trust",
        "marks",
        "score",
        "age",
        "tags",
        "content",
        "context",
    }
    assert (len(body["results"]), body["left_out"]) == (1, 3)
    counted = await db.fetchval("SELECT sum(access_count) FROM memory_access")
    refused = await api.get("/search", params={"q": "cache", "format": "compact", "max_tokens": 1})
    assert refused.status_code == 422
    assert await db.fetchval("SELECT sum(access_count) FROM memory_access") == counted


async def test_an_empty_query_filters_before_it_limits(api: httpx.AsyncClient) -> None:
    await api.post(
        "/memories", json={"content": "set by ops", "trust_level": "system", "source_repo": None}
    )
    for n in range(3):
        await api.post("/memories", json={"content": f"agent note {n}", "source_repo": None})
    answer = await api.get("/search", params={"q": "", "min_trust": "system", "limit": 1})
    assert [r["memory"]["content"] for r in answer.json()["results"]] == ["set by ops"]
