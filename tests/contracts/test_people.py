"""People and personal memory: a personal memory reaches its person's keys alone, through
every door (REST, MCP, the console, export, snapshot, recall, a session's start, stats, the
audit trail); removing a person takes their keys and personal memories, and leaves the
team's. Row security holds it (migration 0045), whatever a statement asks."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from app.console.auth import KEY_COOKIE
from app.services.keys import KeyService
from app.services.people import PeopleService
from app.services.sessions import prune_quietly

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

PREFERENCE = "Answer me in French, with verbose logs in every example"
REPO = "acme/shop"


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
async def team(api: httpx.AsyncClient, db: asyncpg.Connection) -> AsyncIterator[dict[str, str]]:
    """Tenant t: alice's and bob's agent keys, carol's admin key, and a key of no one."""
    service = KeyService.on_connection(db)
    made = {
        "alice": (await service.create("t", "alice laptop", "agent", "alice")).key,
        "bob": (await service.create("t", "bob laptop", "agent", "bob")).key,
        "carol": (await service.create("t", "carol", "admin", "carol")).key,
        "nobody": (await service.create("t", "ci", "agent")).key,
    }
    yield made
    await db.execute("TRUNCATE api_keys, people CASCADE")


async def personal_of_alice(api: httpx.AsyncClient, team: dict[str, str]) -> dict[str, Any]:
    stored = await api.post(
        "/memories",
        headers=auth(team["alice"]),
        json={
            "content": PREFERENCE,
            "memory_type": "decision",
            "source_repo": REPO,
            "personal": True,
            "pinned": True,
        },
    )
    assert stored.status_code == 201, stored.text
    memory: dict[str, Any] = stored.json()["memory"]
    assert memory["personal"] is True and memory["person_id"] is not None
    return memory


async def seen_over_rest(api: httpx.AsyncClient, key: str, memory_id: str) -> list[str]:
    """Every REST door that could hand a memory over, as this key reads it: the doors whose
    answer held the memory's text or id."""
    headers = auth(key)
    answers = {
        "get": await api.get(f"/memories/{memory_id}", headers=headers),
        "list": await api.get("/memories", headers=headers),
        "search": await api.get("/search", params={"q": "French verbose logs"}, headers=headers),
        "keyword": await api.get(
            "/search", params={"q": "French verbose logs", "alpha": 0}, headers=headers
        ),
        "recall": await api.post(
            "/recall", headers=headers, json={"q": "answer in French", "source_repo": REPO}
        ),
        "snapshot": await api.get("/snapshot", params={"source_repo": REPO}, headers=headers),
        "export": await api.get("/memories/export", headers=headers),
        "session start": await api.post("/sessions", headers=headers, json={"source_repo": REPO}),
        "by prefix": await api.get(f"/memories/by-prefix/{memory_id[:12]}", headers=headers),
    }
    return [
        door
        for door, answer in answers.items()
        if answer.status_code < 300 and (PREFERENCE in answer.text or memory_id in answer.text)
    ]


async def test_a_personal_memory_reaches_its_person_alone_over_rest(
    api: httpx.AsyncClient, team: dict[str, str]
) -> None:
    memory = await personal_of_alice(api, team)
    assert await seen_over_rest(api, team["bob"], memory["id"]) == []
    # An admin of the tenant is a person too: not theirs to read.
    assert await seen_over_rest(api, team["carol"], memory["id"]) == []
    assert await seen_over_rest(api, team["nobody"], memory["id"]) == []
    # Alice meets it at every door.
    assert set(await seen_over_rest(api, team["alice"], memory["id"])) >= {
        "get", "by prefix", "list", "search", "keyword", "snapshot", "export",
    }  # fmt: skip
    # Nor through the admin's doors: stats, the audit trail, an edit by id.
    carol = auth(team["carol"])
    assert PREFERENCE not in (await api.get("/stats", headers=carol)).text
    assert memory["id"] not in (await api.get("/audit", headers=carol)).text
    for attempt in (
        await api.patch(f"/memories/{memory['id']}", headers=carol, json={"pinned": False}),
        await api.post(
            f"/memories/{memory['id']}/supersede",
            headers=auth(team["bob"]),
            json={"content": "answer in English", "source_repo": REPO},
        ),
        await api.post(
            f"/memories/{memory['id']}/feedback",
            headers=auth(team["bob"]),
            json={"outcome": "unhelpful"},
        ),
    ):
        assert attempt.status_code == 404, attempt.text


async def test_two_people_may_keep_the_same_note_each_their_own(
    api: httpx.AsyncClient, team: dict[str, str], db: asyncpg.Connection
) -> None:
    alice = await personal_of_alice(api, team)
    bob = await api.post(
        "/memories",
        headers=auth(team["bob"]),
        json={"content": PREFERENCE, "source_repo": REPO, "personal": True},
    )
    assert bob.status_code == 201
    assert bob.json()["status"] == "stored" and bob.json()["memory"]["id"] != alice["id"]
    # The team's copy is a third memory, and reinforces neither.
    team_copy = await api.post(
        "/memories", headers=auth(team["alice"]), json={"content": PREFERENCE, "source_repo": REPO}
    )
    assert team_copy.json()["status"] == "stored"
    assert team_copy.json()["memory"]["personal"] is False
    counts = await db.fetch(
        "SELECT personal, observation_count FROM memories WHERE content = $1", PREFERENCE
    )
    assert sorted((r["personal"], r["observation_count"]) for r in counts) == [
        (False, 1), (True, 1), (True, 1),
    ]  # fmt: skip
    # Bob's search finds the team's and his own, never Alice's.
    found = (
        await api.get("/search", params={"q": "French verbose"}, headers=auth(team["bob"]))
    ).json()["results"]
    assert {r["memory"]["id"] for r in found} == {
        bob.json()["memory"]["id"],
        team_copy.json()["memory"]["id"],
    }


async def test_a_personal_memory_needs_a_person(
    api: httpx.AsyncClient, team: dict[str, str]
) -> None:
    refused = await api.post(
        "/memories",
        headers=auth(team["nobody"]),
        json={"content": PREFERENCE, "source_repo": REPO, "personal": True},
    )
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"] == "personal"
    remembered = await api.post(
        "/remember",
        headers=auth(team["alice"]),
        json={"text": PREFERENCE, "source_repo": None, "personal": True},
    )
    assert remembered.status_code == 201, remembered.text
    assert remembered.json()["memory"]["personal"] is True


async def test_mcp_tools_hand_a_personal_memory_to_its_person_alone(
    api: httpx.AsyncClient, team: dict[str, str], mcp_served: str
) -> None:
    async def texts(key: str) -> str:
        client = httpx2.AsyncClient(headers=auth(key), timeout=30)
        transport = streamable_http_client(f"{mcp_served}/mcp", http_client=client)
        async with client, Client(transport) as mcp:
            calls = [
                ("search_memories", {"query": "French verbose logs", "source_repo": REPO}),
                ("recall", {"query": "answer in French", "source_repo": REPO}),
                ("snapshot", {"source_repo": REPO}),
            ]
            answers = [await mcp.call_tool(name, arguments) for name, arguments in calls]
        return "\n".join(c.text for a in answers for c in a.content)  # type: ignore[union-attr]

    async with httpx.AsyncClient(timeout=30) as plain:
        stored = await plain.post(
            f"{mcp_served}/memories",
            headers=auth(team["alice"]),
            json={"content": PREFERENCE, "source_repo": REPO, "personal": True},
        )
    assert stored.status_code == 201, stored.text
    assert PREFERENCE in await texts(team["alice"])
    assert PREFERENCE not in await texts(team["bob"])
    assert PREFERENCE not in await texts(team["carol"])


async def test_the_console_shows_a_personal_memory_to_its_person_alone(
    api: httpx.AsyncClient, team: dict[str, str]
) -> None:
    memory = await personal_of_alice(api, team)

    async def pages(key: str, statuses: list[int]) -> str:
        api.cookies.set(KEY_COOKIE, key)
        read = [
            await api.get("/console/browse"),
            await api.get("/console/browse", params={"q": "French"}),
            await api.get(f"/console/memories/{memory['id']}"),
            await api.get("/console/stats"),
            await api.get("/console/audit"),
        ]
        api.cookies.clear()
        assert [page.status_code for page in read] == statuses
        # The page of a memory not found names the id it was asked for, and nothing else.
        return "\n".join(page.text for page in read if page.status_code != 404)

    # An agent reads no stats nor audit; an admin reads them, and not Alice's memory.
    assert PREFERENCE in await pages(team["alice"], [200, 200, 200, 403, 403])
    carols = await pages(team["carol"], [200, 200, 404, 200, 200])
    assert PREFERENCE not in carols and memory["id"] not in carols


async def test_removing_a_person_takes_their_keys_and_personal_memories(
    api: httpx.AsyncClient, team: dict[str, str], db: asyncpg.Connection
) -> None:
    personal = await personal_of_alice(api, team)
    shared = await api.post(
        "/memories",
        headers=auth(team["alice"]),
        json={"content": "Deploys go through the release branch only", "source_repo": REPO},
    )
    carol = auth(team["carol"])
    listed = {p["name"]: p for p in (await api.get("/admin/people", headers=carol)).json()}
    # An admin may know a personal memory exists, never read it.
    assert listed["alice"]["personal_memories"] == 1 and listed["alice"]["active_keys"] == 1
    assert PREFERENCE not in (await api.get("/admin/people", headers=carol)).text
    # An admin deletes a person's personal memories unread; the person stays.
    bobs = await api.post(
        "/memories",
        headers=auth(team["bob"]),
        json={"content": "Bob wants terse commit messages", "source_repo": None, "personal": True},
    )
    assert bobs.status_code == 201
    forgot = await api.delete(f"/admin/people/{listed['bob']['id']}/personal", headers=carol)
    assert forgot.json()["personal_memories_deleted"] == 1
    assert (
        await api.get(f"/memories/{bobs.json()['memory']['id']}", headers=auth(team["bob"]))
    ).status_code == 404
    assert (await api.get("/memories", headers=auth(team["bob"]))).status_code == 200
    # A client Alice connected (an OAuth grant, as the consent page makes one).
    alices_key = await db.fetchval("SELECT id FROM api_keys WHERE name = 'alice laptop'")
    grant = await db.fetchval(
        "INSERT INTO oauth_grants (tenant_id, person_id, granted_by_key, client_id,"
        " client_name, redirect_uri, role, resource)"
        " VALUES ('t', $1, $2, 'c-1', 'Claude', 'http://127.0.0.1/cb', 'agent',"
        " 'http://localhost/mcp') RETURNING id",
        uuid.UUID(listed["alice"]["id"]),
        alices_key,
    )
    removed = await api.delete(f"/admin/people/{listed['alice']['id']}", headers=carol)
    assert removed.status_code == 200, removed.text
    assert removed.json() == {
        **removed.json(), "keys_revoked": 1, "personal_memories_deleted": 1,
    }  # fmt: skip
    assert (await api.get("/memories", headers=auth(team["alice"]))).status_code == 401
    gone = await db.fetchval(
        "SELECT count(*) FROM memories WHERE id = $1", uuid.UUID(personal["id"])
    )
    assert gone == 0
    # The team's memory stays, still naming its person.
    kept = await api.get(f"/memories/{shared.json()['memory']['id']}", headers=auth(team["bob"]))
    assert kept.status_code == 200
    assert kept.json()["person_id"] == listed["alice"]["id"]
    assert "alice" not in {
        p["name"] for p in (await api.get("/admin/people", headers=carol)).json()
    }
    actions = [e["action"] for e in (await api.get("/audit", headers=carol)).json()]
    assert "person_remove" in actions and "oauth_revoke" in actions
    assert await db.fetchval("SELECT revoked_at FROM oauth_grants WHERE id = $1", grant)
    # Only an admin removes people.
    bob_id = listed["bob"]["id"]
    assert (
        await api.delete(f"/admin/people/{bob_id}", headers=auth(team["bob"]))
    ).status_code == 403


async def test_the_cli_removes_a_person_after_exporting_their_personal_memories(
    api: httpx.AsyncClient, team: dict[str, str], db: asyncpg.Connection
) -> None:
    await personal_of_alice(api, team)
    service = PeopleService.on_connection(db)
    alice = await service.named("t", "alice")
    summaries = {s.person.name: s for s in await service.list("t")}
    assert summaries["alice"].personal_memories == 1
    revoked, deleted = await service.remove(alice)
    assert (revoked, deleted) == (1, 1)
    assert await db.fetchval("SELECT count(*) FROM memories WHERE personal") == 0
    # A name is free again once its person is gone: the next alice is someone new.
    again, made = await service.add("t", "alice")
    assert made and again.id != alice.id


async def test_the_console_says_who_wrote_what_and_filters_by_person(
    api: httpx.AsyncClient, team: dict[str, str]
) -> None:
    for person, rule in (("alice", "Use the staging database for migration tests"),
                         ("bob", "Release notes are written before the tag")):  # fmt: skip
        stored = await api.post(
            "/memories", headers=auth(team[person]), json={"content": rule, "source_repo": REPO}
        )
        assert stored.status_code == 201
    people = {
        p["name"]: p["id"]
        for p in (await api.get("/admin/people", headers=auth(team["carol"]))).json()
    }
    api.cookies.set(KEY_COOKIE, team["carol"])
    everyone = await api.get("/console/browse")
    only_bob = await api.get("/console/browse", params={"person_id": people["bob"]})
    searched = await api.get("/", params={"q": "staging database", "person_id": people["alice"]})
    api.cookies.clear()
    assert "by alice" in everyone.text and "by bob" in everyone.text
    assert "Release notes" in only_bob.text and "staging database" not in only_bob.text
    assert "by bob" in only_bob.text and "by alice" not in only_bob.text
    assert "by alice" in searched.text and "by bob" not in searched.text
    # The filter is the one every door reads memories through: the API takes it too.
    listed = await api.get(
        "/memories", params={"person_id": people["alice"]}, headers=auth(team["carol"])
    )
    assert [m["content"] for m in listed.json()["memories"]] == [
        "Use the staging database for migration tests"
    ]


async def test_an_admin_manages_people_from_the_console(
    api: httpx.AsyncClient, team: dict[str, str], db: asyncpg.Connection
) -> None:
    await personal_of_alice(api, team)
    api.cookies.set(KEY_COOKIE, team["carol"])
    try:
        keys = await api.get("/console/keys")
        assert keys.status_code == 200
        assert "alice" in keys.text and PREFERENCE not in keys.text
        csrf = keys.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        made = await api.post(
            "/console/keys",
            data={"name": "erin laptop", "role": "agent", "person": "erin", "csrf_token": csrf},
        )
        assert made.status_code == 201 and "erin" in made.text
        alice = await db.fetchval("SELECT id FROM people WHERE name = 'alice'")
        removed = await api.post(
            f"/console/people/{alice}/remove", data={"csrf_token": csrf}, follow_redirects=False
        )
        assert removed.status_code == 303
    finally:
        api.cookies.clear()
    assert await db.fetchval("SELECT count(*) FROM memories WHERE personal") == 0
    assert (await api.get("/memories", headers=auth(team["alice"]))).status_code == 401
    erin = await db.fetchval(
        "SELECT p.name FROM api_keys k JOIN people p ON p.id = k.person_id"
        " WHERE k.name = 'erin laptop'"
    )
    assert erin == "erin"


def a_draft(kind: str, text: str, **more: Any) -> dict[str, Any]:
    return {
        "kind": kind, "text": text, "source_repo": REPO, "client": "codex",
        "client_session": "s-1", **more,
    }  # fmt: skip


async def test_a_persons_own_instruction_is_offered_to_them_alone(
    api: httpx.AsyncClient, team: dict[str, str]
) -> None:
    """Drafts queued by Alice's key: her standing instruction is offered as hers alone (only
    she sees it, and keeps it as a personal memory); a repository's convention is the
    team's, for an admin to keep. A key of no one queues the team's."""
    alice, bob, carol = (auth(team[p]) for p in ("alice", "bob", "carol"))
    queued = await api.post(
        "/drafts",
        headers=alice,
        json={
            "drafts": [
                a_draft("instruction", "Always answer me in French, whatever the repository."),
                a_draft("convention", "Run make lint before every push to this repository."),
            ]
        },
    )
    assert queued.status_code == 201, queued.text
    mine = {d["kind"]: d for d in (await api.get("/drafts", headers=alice)).json()["drafts"]}
    assert (mine["instruction"]["personal"], mine["convention"]["personal"]) == (True, False)
    for other in (bob, carol):
        seen = (await api.get("/drafts", headers=other)).json()["drafts"]
        assert [d["kind"] for d in seen] == ["convention"]
    # Alice keeps her own; the team's convention is an admin's to keep.
    kept = await api.post(f"/drafts/{mine['instruction']['id']}/keep", headers=alice, json={})
    assert kept.status_code == 201, kept.text
    assert kept.json()["memory"]["personal"] is True
    # Kept with her agent key: her words as far as that key may vouch, an agent's.
    assert kept.json()["memory"]["trust_level"] == "agent"
    refused = await api.post(f"/drafts/{mine['convention']['id']}/keep", headers=alice, json={})
    assert refused.status_code == 403
    found = await api.get("/search", params={"q": "answer in French"}, headers=bob)
    assert "French" not in found.text
    # A key of no one: the same instruction is the team's.
    await api.post(
        "/drafts",
        headers=auth(team["nobody"]),
        json={
            "drafts": [
                a_draft("instruction", "Always answer me in French, whatever the repository.")
            ]
        },
    )
    team_drafts = (await api.get("/drafts", headers=carol)).json()["drafts"]
    assert [(d["kind"], d["personal"]) for d in team_drafts] == [
        ("instruction", False), ("convention", False),
    ]  # fmt: skip


async def test_an_export_carries_personal_memories_to_their_person_only(
    api: httpx.AsyncClient, team: dict[str, str], db: asyncpg.Connection
) -> None:
    """Alice's export holds her personal memory, marked; imported by her it is hers again,
    and a key of no one cannot take it in (the line is named, nothing is written)."""
    await personal_of_alice(api, team)
    exported = await api.get("/memories/export", headers=auth(team["alice"]))
    lines = exported.text.splitlines()
    assert any('"personal":true' in line.replace(" ", "") for line in lines[1:])
    body = exported.text.replace("acme/shop", "acme/elsewhere").encode()
    ndjson = {"Content-Type": "application/x-ndjson"}
    ops = (await KeyService.on_connection(db).create("t", "ops", "admin")).key  # of no one
    refused = await api.post("/memories/import", content=body, headers={**auth(ops), **ndjson})
    assert refused.status_code == 422 and "personal" in refused.text
    # Alice as an admin of her own (import is an admin's).
    alice_admin = (await KeyService.on_connection(db).create("t", "a2", "admin", "alice")).key
    taken = await api.post(
        "/memories/import", content=body, headers={**auth(alice_admin), **ndjson}
    )
    assert taken.status_code == 200, taken.text
    moved = await api.get(
        "/memories", params={"source_repo": "acme/elsewhere"}, headers=auth(team["alice"])
    )
    assert [m["personal"] for m in moved.json()["memories"]] == [True]
    unseen = await api.get(
        "/memories", params={"source_repo": "acme/elsewhere"}, headers=auth(team["bob"])
    )
    assert unseen.json()["memories"] == []


async def test_a_personal_memory_does_not_move_a_teammates_keyword_scores(
    api: httpx.AsyncClient, team: dict[str, str]
) -> None:
    """The keyword reader (memory_keyword_postings, owner rights) counts only the rows the
    reader may see: bob's scores are the same whether or not alice's personal memories hold
    a word of his query, so no score tells him what her memories say. (Each term's weight
    is its rarity: hidden rows holding one term would lower its memories beside the
    other's. Pinned: no score moves with the clock.)"""
    told, other = "quetzalcoatlus", "ichthyosaurus"
    for word in (told, other):
        shared = await api.post(
            "/memories",
            headers=auth(team["carol"]),
            json={
                "content": f"The {word} job runs nightly",
                "memory_type": "fact",
                "source_repo": REPO,
                "pinned": True,
            },
        )
        assert shared.status_code == 201, shared.text

    async def bobs_scores() -> list[tuple[str, float]]:
        found = await api.get(
            "/search", params={"q": f"{told} {other}", "alpha": 0}, headers=auth(team["bob"])
        )
        assert found.status_code == 200, found.text
        return [(r["memory"]["content"], r["score"]) for r in found.json()["results"]]

    before = await bobs_scores()
    assert len(before) == 2
    for n in range(3):
        personal = await api.post(
            "/memories",
            headers=auth(team["alice"]),
            json={
                "content": f"My {told} note {n}",
                "memory_type": "fact",
                "source_repo": REPO,
                "personal": True,
            },
        )
        assert personal.status_code == 201, personal.text
    assert await bobs_scores() == before


async def test_the_forgetting_curve_records_a_personal_memory_for_its_person_alone(
    api: httpx.AsyncClient, team: dict[str, str], db: asyncpg.Connection, app: Any
) -> None:
    """Pruning reaches every person's memories (the schedule's work); its audit entry for a
    personal one reaches that person alone, as the memory does: an admin reading the trail
    sees the team's memory pruned, and no id of alice's."""
    mine = await personal_of_alice(api, team)
    await db.execute("UPDATE memories SET pinned = false WHERE id = $1", uuid.UUID(mine["id"]))
    shared = await api.post(
        "/memories",
        headers=auth(team["carol"]),
        json={"content": "The deploy runs at noon", "memory_type": "fact", "source_repo": REPO},
    )
    assert shared.status_code == 201, shared.text
    await db.execute("UPDATE memories SET created_at = now() - interval '400 days'")

    report = await prune_quietly(app.state.runtime, "t", None)

    assert report is not None and report.total_archived == 2
    trail = (await api.get("/audit", headers=auth(team["carol"]))).text
    assert shared.json()["memory"]["id"] in trail
    assert mine["id"] not in trail
