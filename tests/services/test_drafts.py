"""A session's drafts: what the hooks saw the agent learn, kept beside the session, screened
like any write, never served as a memory, the newest three, queued for a person when the
session ends."""

from __future__ import annotations

import asyncpg
import httpx
import pytest

from tests.helpers.credentials import GITHUB_TOKEN

pytestmark = pytest.mark.citus

DRAFT = {
    "text": "`pytest tests/test_upload.py` failed with: PermissionError: /tmp/up. It passed"
    " after changing tests/conftest.py.",
    "files": ["tests/conftest.py"],
}


async def test_drafts_live_beside_their_session_then_wait_for_a_person(
    api: httpx.AsyncClient,
) -> None:
    started = (
        await api.post("/sessions", json={"source_repo": "acme/api", "agent": "codex"})
    ).json()
    await api.post(
        f"/sessions/{started['session_id']}/sources", json={"sources": ["https://example.com/a"]}
    )
    drafts = f"/sessions/{started['session_id']}/drafts"
    for n in range(4):
        added = await api.post(drafts, json={**DRAFT, "text": f"{DRAFT['text']} ({n})"})
        assert added.status_code == 201 and added.json()["held"] == min(n + 1, 3)
    held = (await api.get(drafts)).json()["drafts"]
    assert [d["text"][-3:] for d in held] == ["(1)", "(2)", "(3)"]  # the newest three
    assert held[0]["files"] == ["tests/conftest.py"]
    # Never a memory: no search, list or snapshot serves one.
    assert (await api.get("/memories")).json()["memories"] == []
    assert (await api.post("/search", json={"q": "PermissionError upload"})).json()["results"] == []
    assert (
        "PermissionError"
        not in (await api.get("/snapshot", params={"source_repo": "acme/api"})).text
    )
    await api.post(f"/sessions/{started['session_id']}/end", json={"status": "completed"})
    assert (await api.get(drafts)).json()["drafts"] == []
    late = await api.post(drafts, json=DRAFT)
    assert late.status_code == 409
    # What it still held waits in the review queue, with what the session had read.
    queued = (await api.get("/drafts")).json()["drafts"]
    assert sorted(d["text"][-3:] for d in queued) == ["(1)", "(2)", "(3)"]
    assert {(d["client"], d["client_session"], d["source_repo"]) for d in queued} == {
        ("codex", started["session_id"], "acme/api")
    }
    assert queued[0]["sources"] == ["https://example.com/a"]
    trail = (await api.get("/audit", params={"action": "draft_import"})).json()
    assert [e["detail"]["session"] for e in trail] == [started["session_id"]]


async def test_a_session_of_no_repository_queues_no_draft(api: httpx.AsyncClient) -> None:
    started = (await api.post("/sessions", json={})).json()
    await api.post(f"/sessions/{started['session_id']}/drafts", json=DRAFT)
    await api.post(f"/sessions/{started['session_id']}/end", json={"status": "completed"})
    assert (await api.get("/drafts")).json()["drafts"] == []


async def test_a_draft_is_screened_like_any_write(api: httpx.AsyncClient) -> None:
    started = (await api.post("/sessions", json={"source_repo": "acme/api"})).json()
    drafts = f"/sessions/{started['session_id']}/drafts"
    refused = await api.post(drafts, json={"text": f"push failed: token {GITHUB_TOKEN} expired"})
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "text"
    assert (await api.get(drafts)).json()["drafts"] == []
    unknown = await api.post("/sessions/00000000-0000-7000-8000-000000000000/drafts", json=DRAFT)
    assert unknown.status_code == 404


async def test_a_session_closed_as_abandoned_queues_its_drafts(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """Its agent never ended it: the next session start closes it, and what it held waits
    in the review queue as an ended session's would."""
    old = (await api.post("/sessions", json={"source_repo": "acme/api", "agent": "cursor"})).json()
    await api.post(f"/sessions/{old['session_id']}/drafts", json=DRAFT)
    await db.execute("UPDATE sessions SET started_at = now() - interval '30 days'")
    await api.post("/sessions", json={"source_repo": "acme/api"})
    row = await db.fetchrow("SELECT status, drafts FROM sessions WHERE id = $1", old["session_id"])
    assert (row["status"], row["drafts"]) == ("abandoned", "[]")
    queued = (await api.get("/drafts")).json()["drafts"]
    assert [(d["text"], d["client"]) for d in queued] == [(DRAFT["text"], "cursor")]
