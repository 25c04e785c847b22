"""Tidy proposals: memories that say the same thing are proposed for a merge, a pair that
may say the opposite for a replacement, a memory stale and unread for retirement; never
applied on their own; each accepted or dismissed once, audited and undone; a dismissed one
does not come back while its memories stay as they were. (Near-duplicates come in through an
import, which keeps what a backup held: the write path would have merged them.)"""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest

from tests.helpers.export_files import NDJSON_BODY, export_file
from tests.helpers.keys import admin_and_agent
from tests.helpers.tidy import CLUSTER, FIFTH, OPPOSED, SAME

pytestmark = pytest.mark.citus

OTHER = "The search service caches query embeddings for five minutes"


async def imported(api: httpx.AsyncClient, *contents: str, repo: str = "acme/api") -> list[str]:
    lines = [{"content": c, "memory_type": "learning", "source_repo": repo} for c in contents]
    done = await api.post("/memories/import", content=export_file(*lines), headers=NDJSON_BODY)
    assert done.status_code == 200, done.text
    listed = (await api.get("/memories", params={"source_repo": repo, "limit": 50})).json()
    by_content = {m["content"]: m["id"] for m in listed["memories"]}
    return [by_content[c] for c in contents]


async def proposals(api: httpx.AsyncClient, *kinds: str) -> list[dict[str, Any]]:
    listed = await api.get("/proposals", params={"kind": list(kinds)} if kinds else None)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["proposals"])


@pytest.mark.parametrize("read", ["exact", "through the graph"])
async def test_proposals_are_found_and_never_applied_on_their_own(
    api: httpx.AsyncClient, db: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    """A repository's neighbours are read as the one read of the nearest chooses: exactly
    (a bound sized for the whole graph, its rows counted), or through the graph (a bound of
    none): the same proposals either way."""
    divisor = 1 if read == "exact" else 10**9
    monkeypatch.setattr("app.repository.nearest.NEAREST_GRAPH_DIVISOR", divisor)
    same = await imported(api, *SAME)
    opposed = await imported(api, *OPPOSED)
    other = await imported(api, OTHER)
    # The same texts in another repository are that repository's own.
    await imported(api, SAME[0], repo="acme/web")
    await db.execute("ANALYZE memories")  # the graph's rows, which the bound is sized by
    await db.execute(
        "UPDATE memories SET stale_since = now() - interval '30 days',"
        ' stale_reason = \'{"files": ["app/cache.py"]}\' WHERE id = $1',
        other[0],
    )
    computed = (await api.post("/proposals/refresh")).json()
    # (A rule deleted from its file is no guess: import-files proposes those, not a refresh.)
    assert computed["found"] == {"merge": 1, "replace": 1, "retire": 1, "unwritten": 0}
    assert computed["saved"] == 3
    # None of these kinds is listed by default (none is measured right nine times in ten):
    # the answer says how many wait, by kind.
    listed = (await api.get("/proposals")).json()
    assert listed == {"proposals": [], "not_listed": {"merge": 1, "replace": 1, "retire": 1}}
    found = {p["kind"]: p for p in await proposals(api, "merge", "replace", "retire")}
    assert set(found["merge"]["memory_ids"]) == set(same)
    assert [m["id"] for m in found["merge"]["memories"]] == found["merge"]["memory_ids"]
    assert set(found["replace"]["memory_ids"]) == set(opposed)
    assert found["retire"]["memory_ids"] == other and "app/cache.py" in found["retire"]["reason"]
    # Nothing was applied: every memory is live.
    live = "SELECT count(*) FROM memories WHERE superseded_by IS NULL AND archived_at IS NULL"
    assert await db.fetchval(live) == 6
    # Computed again: nothing new.
    assert (await api.post("/proposals/refresh")).json()["saved"] == 0


async def test_a_memory_none_of_its_twins_reads_is_in_their_merge(api: httpx.AsyncClient) -> None:
    """Five memories say one thing; four of them are nearer each other than to the fifth,
    stored last (the highest id), so none of the four reads it among its nearest. It reads
    them: a pair is near when either memory has the other among its nearest, so the merge
    names all five, and no pair is proposed twice."""
    restated = await imported(api, *CLUSTER)
    restated += await imported(api, FIFTH)
    computed = (await api.post("/proposals/refresh")).json()
    assert computed["found"] == {"merge": 1, "replace": 0, "retire": 0, "unwritten": 0}
    (merge,) = await proposals(api, "merge")
    assert sorted(merge["memory_ids"]) == sorted(restated)


async def test_accepting_merges_and_undo_puts_it_back(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    same = await imported(api, *SAME)
    await db.execute(
        "INSERT INTO memory_access (tenant_id, memory_id, access_count) VALUES ('default', $1, 4)",
        same[1],
    )
    await api.post("/proposals/refresh")
    (merge,) = await proposals(api, "merge")
    assert merge["memory_ids"] == [same[1], same[0]]  # the most read is kept
    accepted = await api.post(f"/proposals/{merge['id']}/accept")
    assert accepted.status_code == 200 and accepted.json()["status"] == "accepted"
    row = await db.fetchrow("SELECT superseded_by::text FROM memories WHERE id = $1", same[0])
    assert row["superseded_by"] == same[1]
    assert (await api.post(f"/proposals/{merge['id']}/accept")).status_code == 409  # once
    assert await proposals(api, "merge") == []
    undone = await api.post(f"/proposals/{merge['id']}/undo")
    assert undone.status_code == 200 and undone.json()["status"] == "pending"
    assert await db.fetchval("SELECT superseded_by FROM memories WHERE id = $1", same[0]) is None
    actions = [r["action"] for r in await db.fetch("SELECT action FROM audit_log ORDER BY at")]
    assert actions[-2:] == ["supersede", "undo"]


async def test_accepting_a_retirement_archives(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    (memory_id,) = await imported(api, OTHER)
    await db.execute(
        "UPDATE memories SET stale_since = now() - interval '30 days' WHERE id = $1", memory_id
    )
    # Read after it was marked: not proposed.
    await db.execute(
        "INSERT INTO memory_access (tenant_id, memory_id, access_count, last_accessed_at)"
        " VALUES ('default', $1, 1, now())",
        memory_id,
    )
    assert (await api.post("/proposals/refresh")).json()["found"]["retire"] == 0
    await db.execute("DELETE FROM memory_access")
    await api.post("/proposals/refresh")
    (retire,) = await proposals(api, "retire")
    assert (await api.post(f"/proposals/{retire['id']}/accept")).status_code == 200
    assert await db.fetchval(
        "SELECT archived_at IS NOT NULL FROM memories WHERE id = $1", memory_id
    )


async def test_a_dismissed_proposal_comes_back_only_when_its_memories_change(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    opposed = await imported(api, *OPPOSED)
    await api.post("/proposals/refresh")
    (replace,) = await proposals(api, "replace")
    assert replace["memory_ids"][0] in opposed
    dismissed = await api.post(f"/proposals/{replace['id']}/dismiss")
    assert dismissed.json()["status"] == "dismissed"
    assert (await api.post("/proposals/refresh")).json()["saved"] == 0
    assert await proposals(api, "replace") == []
    # Undo a dismissal: pending again.
    assert (await api.post(f"/proposals/{replace['id']}/undo")).json()["status"] == "pending"
    await api.post(f"/proposals/{replace['id']}/dismiss")
    # One of its memories changed since: asked again.
    edited = await api.patch(f"/memories/{opposed[1]}", json={"tags": ["deploys"]})
    assert edited.status_code == 200, edited.text
    assert (await api.post("/proposals/refresh")).json()["saved"] == 1
    assert [p["id"] for p in await proposals(api, "replace")] == [replace["id"]]


async def test_a_proposal_whose_memory_went_is_not_listed(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    same = await imported(api, *SAME)
    await api.post("/proposals/refresh")
    (merge,) = await proposals(api, "merge")
    assert (await api.post(f"/memories/{same[0]}/archive")).status_code == 200
    assert await proposals(api, "merge") == []
    assert (await api.post(f"/proposals/{merge['id']}/accept")).status_code == 409


async def test_proposals_are_an_admins(api: httpx.AsyncClient) -> None:
    _, agent = await admin_and_agent(api)
    assert (await api.get("/proposals", headers=agent)).status_code == 403
    assert (await api.post("/proposals/refresh", headers=agent)).status_code == 403
