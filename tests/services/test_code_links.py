"""Memories that know their code (the branch, the commit, the files), marked possibly stale
when one of those files changes; and global memories, in every repository's results."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client

pytestmark = pytest.mark.citus

COMMIT_A = "3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f"
COMMIT_B = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"


async def test_the_code_a_memory_is_about_round_trips_normalised(api: httpx.AsyncClient) -> None:
    stored = await api.post(
        "/memories",
        json={
            "content": "The pool sets hnsw.ef_search per connection",
            "source_repo": "acme/api",
            "git_branch": "main",
            "git_commit": COMMIT_A.upper(),
            "files": ["./app/db/pool.py", "app\\db\\pool.py", "app//db/session.py"],
        },
    )
    assert stored.status_code == 201, stored.text
    memory = stored.json()["memory"]
    assert memory["git_branch"] == "main" and memory["git_commit"] == COMMIT_A
    assert memory["files"] == ["app/db/pool.py", "app/db/session.py"]
    assert memory["stale_since"] is None


async def test_a_changed_file_marks_its_memories_until_confirmed(api: httpx.AsyncClient) -> None:
    pool = (
        await api.post(
            "/memories",
            json={
                "content": "app/db/pool.py sets hnsw.ef_search per connection",
                "memory_type": "decision",
                "source_repo": "acme/api",
                "files": ["app/db/pool.py"],
            },
        )
    ).json()["memory"]
    other = (
        await api.post(
            "/memories",
            json={"content": "The README lists two commands", "source_repo": "acme/api",
                  "files": ["README.md"], "memory_type": "decision"},
        )
    ).json()["memory"]  # fmt: skip
    first = await api.post("/sessions", json={"source_repo": "acme/api", "git_commit": COMMIT_A})
    assert first.json()["marked_stale"] == 0
    assert first.json()["session"]["git_commit"] == COMMIT_A
    last = (await api.get("/sessions", params={"source_repo": "acme/api", "limit": 1})).json()
    assert last[0]["git_commit"] == COMMIT_A
    second = await api.post(
        "/sessions",
        json={"source_repo": "acme/api", "git_commit": COMMIT_B,
              "changed_files": ["app/db/pool.py", "app/other.py"]},
    )  # fmt: skip
    assert second.json()["marked_stale"] == 1
    marked = (await api.get(f"/memories/{pool['id']}")).json()
    assert marked["stale_since"] is not None
    assert marked["stale_reason"] == {"files": ["app/db/pool.py"], "commit": COMMIT_B}
    assert (await api.get(f"/memories/{other['id']}")).json()["stale_since"] is None

    snapshot = (await api.get("/snapshot", params={"source_repo": "acme/api"})).text
    line = next(x for x in snapshot.splitlines() if "hnsw.ef_search" in x)
    assert 'possibly stale: "app/db/pool.py" changed at 9e8d7c6b5a4f' in line
    compact = await api.get(
        "/search", params={"q": "ef_search pool", "source_repo": "acme/api", "format": "compact"}
    )
    hit = next(r for r in compact.json()["results"] if r["id"] == pool["id"])
    assert "possibly-stale" in hit["marks"]

    confirmed = await api.post(f"/memories/{pool['id']}/confirm", json={"git_commit": COMMIT_B})
    assert confirmed.status_code == 200
    assert confirmed.json()["stale_since"] is None and confirmed.json()["git_commit"] == COMMIT_B
    # Marked again by a later change, then observed again: the reinforcement clears it.
    await api.post(
        "/sessions",
        json={
            "source_repo": "acme/api",
            "git_commit": COMMIT_A,
            "changed_files": ["app/db/pool.py"],
        },
    )
    assert (await api.get(f"/memories/{pool['id']}")).json()["stale_since"] is not None
    again = await api.post(
        "/memories",
        json={"content": pool["content"], "source_repo": "acme/api", "memory_type": "decision"},
    )
    assert again.json()["memory"]["stale_since"] is None


async def test_global_memories_reach_every_repository(api: httpx.AsyncClient, served: str) -> None:
    convention = await api.post(
        "/memories",
        json={"content": "Always write commit messages in the imperative mood",
              "memory_type": "decision", "source_repo": None},
    )  # fmt: skip
    assert convention.json()["memory"]["source_repo"] is None
    await api.post(
        "/memories",
        json={"content": "Commit messages here carry the ticket id", "source_repo": "acme/api",
              "memory_type": "decision"},
    )  # fmt: skip
    await api.post(
        "/memories",
        json={"content": "Commit messages in the web repo are emoji-prefixed",
              "source_repo": "acme/web", "memory_type": "decision"},
    )  # fmt: skip
    found = await api.get("/search", params={"q": "commit messages", "source_repo": "acme/api"})
    contents = {r["memory"]["content"] for r in found.json()["results"]}
    assert "Always write commit messages in the imperative mood" in contents
    assert "Commit messages here carry the ticket id" in contents
    assert not any("emoji" in c for c in contents)
    only_repo = await api.get(
        "/search", params={"q": "commit messages", "source_repo": "acme/api", "scope": "repo"}
    )
    assert {r["memory"]["source_repo"] for r in only_repo.json()["results"]} == {"acme/api"}
    listed = await api.get("/memories", params={"source_repo": "acme/api"})
    assert len(listed.json()["memories"]) == 2
    snapshot = (await api.get("/snapshot", params={"source_repo": "acme/api"})).text
    assert '- [agent · global] "Always write commit messages in the imperative mood"' in snapshot
    assert "emoji" not in snapshot
    async with Client(f"{served}/mcp") as client:
        result = await client.call_tool(
            "search_memories", {"query": "commit messages", "source_repo": "acme/api"}
        )
    lines = result.content[0].text.splitlines()  # type: ignore[union-attr]
    at = lines.index('"Always write commit messages in the imperative mood"')
    assert " global]" in lines[at - 1]  # its head line: rank, score, type, trust, age, marks


async def test_a_search_prefers_the_current_branch_without_filtering(
    api: httpx.AsyncClient,
) -> None:
    notes = {
        "main": "Keyset pagination for the orders list, as main serves it",
        "feature/pagination": "Keyset pagination for the orders list with cursor tokens",
    }
    for branch, content in notes.items():
        stored = await api.post(
            "/memories",
            json={"content": content, "source_repo": "acme/api", "git_branch": branch},
        )
        assert stored.status_code == 201, stored.text
    params = {"q": "keyset pagination orders", "source_repo": "acme/api", "floor": "false"}
    for branch in ("main", "feature/pagination"):
        found = await api.get("/search", params={**params, "git_branch": branch})
        results = [r["memory"]["git_branch"] for r in found.json()["results"]]
        assert results[0] == branch and set(results) == {"main", "feature/pagination"}


async def test_a_learned_strategy_links_the_files_it_changed(api: httpx.AsyncClient) -> None:
    learned = await api.post(
        "/strategies/learn",
        json={
            "task_description": "add keyset pagination to the orders endpoint",
            "total_attempts": 1,
            "quality_score": 9,
            "plan_summary": "1. add a cursor\\n2. test it",
            "source_repo": "acme/api",
            "files_changed": ["./app/api/orders.py", "tests/test_orders.py", "../elsewhere.py"],
        },
    )
    assert learned.status_code in (200, 201), learned.text
    memory = learned.json()["memory"]
    assert memory["files"] == ["app/api/orders.py", "tests/test_orders.py"]
    started = await api.post(
        "/sessions",
        json={"source_repo": "acme/api", "git_commit": COMMIT_B,
              "changed_files": ["app/api/orders.py"]},
    )  # fmt: skip
    assert started.json()["marked_stale"] == 1
