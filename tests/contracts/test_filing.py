"""Where a memory belongs, and that changing it loses nothing: a write names its repository
or says global; a supersede carries what the replacement leaves out, and its undo restores
both sides; staleness counts from the memory's own commit; the console's End is not a
result; a server on a network address never starts open."""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import pytest
from mcp import Client

from app.cli.service import first_key_on_network
from app.config import Settings
from tests.helpers.console import csrf_of, keys, signed_in  # noqa: F401 (fixture)

COMMIT_A = "3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f"
COMMIT_B = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"
COMMIT_C = "0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/memories", {"content": "Pin the Postgres major version"}),
        ("/remember", {"text": "Pin the Postgres major version in CI images"}),
        ("/memories/batch", {"memories": [{"content": "Pin the Postgres major version"}]}),
        ("/strategies/learn", {"task_description": "add a column", "total_attempts": 1,
                               "quality_score": 9, "plan_steps": ["add", "backfill"]}),
    ],
)  # fmt: skip
async def test_a_write_that_names_no_repository_is_refused(
    api: httpx.AsyncClient, db: asyncpg.Connection, path: str, body: dict[str, object]
) -> None:
    refused = await api.post(path, json=body)
    assert refused.status_code == 422
    assert [e["field"].split(".")[-1] for e in refused.json()["errors"]] == ["source_repo"]
    assert await db.fetchval("SELECT count(*) FROM memories") == 0


async def test_a_global_memory_is_one_its_writer_said_is_global(
    api: httpx.AsyncClient, served: str
) -> None:
    said = await api.post("/memories", json={"content": "Imperative commits", "source_repo": None})
    assert said.status_code == 201 and said.json()["memory"]["source_repo"] is None
    async with Client(f"{served}/mcp") as client:  # no bridge: no workspace to default to
        unsaid = await client.call_tool("remember", {"text": "Imperative commit messages, always"})
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert unsaid.is_error and '"field": "source_repo"' in unsaid.content[0].text  # type: ignore[union-attr]
    assert "source_repo" in listed["remember"].input_schema["required"]
    # A client that asks for no repository tools still sees no resource or prompt tools.
    assert "resources" not in listed and "prompts" not in listed


async def test_a_supersede_keeps_what_the_replacement_leaves_out_and_its_undo_both_sides(
    api: httpx.AsyncClient,
) -> None:
    old = (
        await api.post(
            "/memories",
            json={"content": "Deploys run on Fridays", "source_repo": "acme/api", "pinned": True,
                  "memory_type": "decision",
                  "files": ["deploy.yml"], "git_commit": COMMIT_A, "git_branch": "main",
                  "tags": ["deploy"], "category": "ops"},
        )
    ).json()["memory"]  # fmt: skip
    replaced = await api.post(
        f"/memories/{old['id']}/supersede", json={"content": "Deploys never run on Fridays"}
    )
    assert replaced.status_code == 201, replaced.text
    new = replaced.json()["replacement"]["memory"]
    kept = ("source_repo", "pinned", "files", "git_commit", "git_branch", "tags", "category")
    assert {f: new[f] for f in kept} == {f: old[f] for f in kept}

    entry = (await api.get("/audit", params={"action": "supersede"})).json()[0]
    undone = await api.post(f"/audit/{entry['id']}/undo")
    assert undone.status_code == 200, undone.text
    after = {
        m["id"]: m for m in (await api.get("/memories", params={"limit": 10})).json()["memories"]
    }
    assert list(after) == [old["id"]] and after[old["id"]]["superseded_by"] is None
    snapshot = (await api.get("/snapshot", params={"source_repo": "acme/api"})).text
    assert "Deploys run on Fridays" in snapshot and "never run" not in snapshot


async def test_an_undo_of_a_supersede_whose_replacement_changed_since_undoes_nothing(
    api: httpx.AsyncClient,
) -> None:
    old = (
        await api.post("/memories", json={"content": "Cache for an hour", "source_repo": "r"})
    ).json()["memory"]
    replaced = await api.post(f"/memories/{old['id']}/supersede", json={"content": "Cache a day"})
    new = replaced.json()["replacement"]["memory"]
    assert (await api.patch(f"/memories/{new['id']}", json={"tags": ["x"]})).is_success
    entry = (await api.get("/audit", params={"action": "supersede"})).json()[0]
    assert (await api.post(f"/audit/{entry['id']}/undo")).status_code == 409
    shown = (await api.get(f"/memories/{old['id']}")).json()
    assert shown["superseded_by"] == new["id"]  # nothing was put back


async def test_staleness_counts_from_the_memorys_own_commit(api: httpx.AsyncClient) -> None:
    """History since the last session: B changed pool.py, then C changed session.py. A
    memory written at B about pool.py is fresh; one written at A (before the history) or
    without a commit is stale; one written at B about session.py is stale (C changed it)."""

    async def memory(content: str, files: list[str], commit: str | None) -> str:
        body = {"content": content, "source_repo": "acme/api", "files": files, "git_commit": commit}
        return str((await api.post("/memories", json=body)).json()["memory"]["id"])

    fresh = await memory("pool.py: ef_search is 200 since B", ["app/db/pool.py"], COMMIT_B)
    older = await memory("pool.py: ef_search is 100", ["app/db/pool.py"], COMMIT_A)
    unknown = await memory("pool.py sets ef_search per connection", ["app/db/pool.py"], None)
    later = await memory("session.py opens one pool", ["app/db/session.py"], COMMIT_B)
    history = [
        {"commit": COMMIT_C, "files": ["app/db/session.py"]},
        {"commit": COMMIT_B, "files": ["app/db/pool.py"]},
    ]
    started = await api.post(
        "/sessions", json={"source_repo": "acme/api", "git_commit": COMMIT_C, "history": history}
    )
    assert started.status_code == 201, started.text
    assert started.json()["marked_stale"] == 3
    marks = {
        m: (await api.get(f"/memories/{m}")).json()["stale_since"] is not None
        for m in (fresh, older, unknown, later)
    }
    assert marks == {fresh: False, older: True, unknown: True, later: True}


async def test_the_consoles_end_is_its_owners_not_a_result(
    served: str,
    keys: dict[str, str],  # noqa: F811 (the fixture)
    db: asyncpg.Connection,
) -> None:
    admin = {"Authorization": f"Bearer {keys['admin']}"}
    async with httpx.AsyncClient(base_url=served, headers=admin) as api:
        started = (await api.post("/sessions", json={"source_repo": "r"})).json()
    async with httpx.AsyncClient(base_url=served) as http:
        await signed_in(http, keys["admin"])
        page = await http.get("/console/sessions")
        ended = await http.post(
            f"/console/sessions/{started['session_id']}/end",
            data={"csrf_token": csrf_of(page.text)},
        )
        assert ended.status_code == 303
    row = await db.fetchrow("SELECT status, summary FROM sessions")
    assert dict(row) == {"status": "abandoned", "summary": "ended by its owner from the console"}


async def test_a_server_on_a_network_address_starts_with_a_first_admin_key_shown_once(
    api: httpx.AsyncClient, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(database_url=database_url)
    await asyncio.to_thread(
        first_key_on_network, database_url, "127.0.0.1", settings
    )  # loopback: open mode serves
    assert capsys.readouterr().err == ""
    await asyncio.to_thread(first_key_on_network, database_url, "0.0.0.0", settings)
    shown = capsys.readouterr().err
    key = next(line.strip() for line in shown.splitlines() if line.strip().startswith("am_"))
    me = await api.get("/admin/keys", headers={"Authorization": f"Bearer {key}"})
    assert me.status_code == 200 and [k["role"] for k in me.json()] == ["admin"]
    assert (await api.get("/memories")).status_code == 401  # keyed now, not open
    await asyncio.to_thread(first_key_on_network, database_url, "0.0.0.0", settings)  # again
    assert capsys.readouterr().err == ""
