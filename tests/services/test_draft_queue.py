"""The review queue: drafts from past sessions wait for a person, never served to an agent;
each is kept (as it is or rewritten), dropped or put back once; a second import of the same
history queues nothing; a draft holding a secret is never stored; every decision audited."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.domain import draft_groups
from app.domain.errors import InvalidInputError
from app.domain.principal import OPEN_PRINCIPAL
from app.services.scope import services_for
from tests.helpers.credentials import GITHUB_TOKEN
from tests.helpers.drafts import EVIDENCED, FIX, RULE
from tests.helpers.keys import admin_and_agent

pytestmark = pytest.mark.citus


async def queue(api: httpx.AsyncClient, *drafts: dict[str, Any]) -> dict[str, Any]:
    done = await api.post("/drafts", json={"drafts": list(drafts)})
    assert done.status_code == 201, done.text
    return dict(done.json())


async def pending(api: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    listed = await api.get("/drafts", params=params)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["drafts"])


async def test_drafts_wait_for_a_person_and_are_never_served(api: httpx.AsyncClient) -> None:
    done = await queue(api, FIX, RULE)
    assert len(done["queued"]) == 2 and done["known"] == 0 and done["refused"] == []
    listed = await pending(api)
    assert [d["kind"] for d in listed] == ["instruction", "fix"]  # newest first
    assert listed[0]["sources"] == ["https://example.com/setup"]
    assert listed[1]["files"] == ["helper.py"] and listed[1]["client"] == "codex"
    assert [d["kind"] for d in await pending(api, source_repo="acme/web")] == []
    # A page at a time.
    first = (await api.get("/drafts", params={"limit": 1})).json()
    after = await pending(api, limit=1, cursor=first["next_cursor"])
    assert [d["kind"] for d in first["drafts"] + after] == ["instruction", "fix"]
    # Never a memory: no list, search or snapshot serves one.
    assert (await api.get("/memories")).json()["memories"] == []
    assert (await api.post("/search", json={"q": "generated files make target"})).json()[
        "results"
    ] == []
    snapshot = await api.get("/snapshot", params={"source_repo": "acme/api"})
    assert "generated files" not in snapshot.text
    # The same history again: nothing new.
    again = await queue(api, FIX, RULE)
    assert again["queued"] == [] and again["known"] == 2
    assert len(await pending(api)) == 2


async def test_a_kept_draft_becomes_a_persons_memory_once(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    fix_id, rule_id = (await queue(api, FIX, RULE))["queued"]
    kept = await api.post(f"/drafts/{fix_id}/keep")
    assert kept.status_code == 201, kept.text
    memory = kept.json()["memory"]
    assert memory["content"] == FIX["text"] and memory["source_repo"] == "acme/api"
    assert memory["files"] == ["helper.py"] and memory["trust_level"] == "user"
    assert (await api.post(f"/drafts/{fix_id}/keep")).status_code == 409  # once
    # Rewritten by the person, then kept.
    rewrite = "Generated files are made by `make gen`: never edit them by hand."
    edited = await api.post(f"/drafts/{rule_id}/keep", json={"text": rewrite})
    assert edited.status_code == 201 and edited.json()["memory"]["content"] == rewrite
    assert await pending(api) == []
    row = await db.fetchrow("SELECT status, memory_id::text FROM drafts WHERE id = $1", rule_id)
    assert dict(row) == {"status": "kept", "memory_id": edited.json()["memory"]["id"]}
    found = (await api.post("/search", json={"q": "make gen generated files"})).json()["results"]
    assert [r["memory"]["content"] for r in found][:1] == [rewrite]
    actions = await db.fetch(
        "SELECT action, detail->>'edited' AS edited FROM audit_log ORDER BY at"
    )
    assert [a["action"] for a in actions] == ["draft_import", "draft_keep", "draft_keep"]
    assert [a["edited"] for a in actions[1:]] == ["false", "true"]


async def test_a_rewrite_passes_every_rule_a_write_does(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    (draft_id,) = (await queue(api, FIX))["queued"]
    leaked = await api.post(f"/drafts/{draft_id}/keep", json={"text": f"use token {GITHUB_TOKEN}"})
    assert leaked.status_code == 422 and leaked.json()["errors"][0]["field"] == "text"
    short = await api.post(f"/drafts/{draft_id}/keep", json={"text": "fixed"})
    assert short.status_code == 422
    assert await db.fetchval("SELECT count(*) FROM memories") == 0
    assert [d["id"] for d in await pending(api)] == [draft_id]  # still waiting


async def test_dropped_drafts_stay_dropped_until_put_back(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    ids = (await queue(api, FIX, RULE))["queued"]
    dropped = await api.post("/drafts/drop", json={"ids": ids})
    assert dropped.status_code == 200, dropped.text
    assert sorted(dropped.json()["dropped"]) == sorted(ids)
    assert await pending(api) == []
    assert (await queue(api, FIX, RULE))["known"] == 2  # an import does not bring them back
    assert await pending(api) == []
    back = await api.post(f"/drafts/{ids[0]}/restore")
    assert back.status_code == 200 and back.json()["status"] == "pending"
    assert [d["id"] for d in await pending(api)] == [ids[0]]
    assert (await api.post(f"/drafts/{ids[0]}/restore")).status_code == 409  # not dropped
    assert (await api.post("/drafts/drop", json={"ids": ids})).json()["dropped"] == [ids[0]]
    actions = [r["action"] for r in await db.fetch("SELECT action FROM audit_log ORDER BY at")]
    assert actions == ["draft_import", "draft_drop", "draft_restore", "draft_drop"]


async def test_a_draft_holding_a_secret_is_never_stored(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    leaked = {**FIX, "text": f"`git push` failed with: bad token {GITHUB_TOKEN}. It passed after"
              " changing .env."}  # fmt: skip
    done = await queue(api, RULE, leaked)
    assert len(done["queued"]) == 1 and [r["index"] for r in done["refused"]] == [1]
    assert GITHUB_TOKEN not in done["refused"][0]["reason"]
    stored = await db.fetch("SELECT text FROM drafts")
    assert [r["text"] for r in stored] == [RULE["text"]]
    trail = await db.fetchval("SELECT string_agg(detail::text, ' ') FROM audit_log")
    assert GITHUB_TOKEN not in trail


async def test_a_bad_draft_refuses_the_call_and_queues_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    for bad, field in (
        ({**RULE, "kind": "rumour"}, "drafts.1.kind"),
        ({**RULE, "source_repo": " "}, "drafts.1.source_repo"),
        ({**RULE, "files": ["../etc/passwd"]}, "drafts.1.files"),
        ({**RULE, "seen_at": "last tuesday"}, "drafts.1.seen_at"),
    ):
        refused = await api.post("/drafts", json={"drafts": [FIX, bad]})
        assert refused.status_code == 422, refused.text
        assert refused.json()["errors"][0]["field"] == field
    assert await db.fetchval("SELECT count(*) FROM drafts") == 0


async def test_only_a_person_decides(api: httpx.AsyncClient) -> None:
    """An agent's key queues drafts; keeping and dropping are an admin's (a person's)."""
    owner, agent = await admin_and_agent(api)
    done = await api.post("/drafts", json={"drafts": [FIX]}, headers=agent)
    assert done.status_code == 201
    (draft_id,) = done.json()["queued"]
    assert (await api.post(f"/drafts/{draft_id}/keep", headers=agent)).status_code == 403
    dropping = await api.post("/drafts/drop", json={"ids": [draft_id]}, headers=agent)
    assert dropping.status_code == 403
    assert (await api.post(f"/drafts/{draft_id}/keep", headers=owner)).status_code == 201


async def test_a_tenants_drafts_are_its_own(api: httpx.AsyncClient, db: asyncpg.Connection) -> None:
    from app.services.keys import KeyService

    keys = KeyService.on_connection(db)
    ours = {"Authorization": f"Bearer {(await keys.create('ours', 'me', 'admin')).key}"}
    theirs = {"Authorization": f"Bearer {(await keys.create('theirs', 'me', 'admin')).key}"}
    (draft_id,) = (await api.post("/drafts", json={"drafts": [FIX]}, headers=ours)).json()["queued"]
    assert (await api.get("/drafts", headers=theirs)).json()["drafts"] == []
    assert (await api.post(f"/drafts/{draft_id}/keep", headers=theirs)).status_code == 404
    assert (await api.post("/drafts/drop", json={"ids": [draft_id]}, headers=theirs)).json()[
        "dropped"
    ] == []
    # The same finding queued by another tenant is its own draft, not "known".
    assert (
        len((await api.post("/drafts", json={"drafts": [FIX]}, headers=theirs)).json()["queued"])
        == 1
    )
    assert [d["id"] for d in (await api.get("/drafts", headers=ours)).json()["drafts"]] == [
        draft_id
    ]


# --- Evidence, a key, conventions (migration 0044) ----------------------------------------

CONVENTION: dict[str, Any] = {
    **FIX,
    "kind": "convention",
    "text": "Tests run through `uv run pytest -q`, never a bare pytest.",
    "files": [],
    "client": "opencode",
    "client_session": "s-convention",
    "evidence": {"shown": "uv run pytest -q\nuv run pytest -q tests/api"},
}


async def test_a_draft_carries_its_evidence(api: httpx.AsyncClient) -> None:
    said = {**RULE, "client": "copilot-cli", "evidence": {"said": "no, never edit those files"}}
    distilled = {
        **FIX,
        "text": "The upload tests need tests/conftest.py to make /tmp/up writable first.",
        "client_session": "s-distilled",
        "evidence": {"distilled_by": "codex"},
    }
    gemini = {**FIX, "client": "gemini-cli"}
    done = await queue(api, EVIDENCED, CONVENTION, said, gemini, distilled)
    assert len(done["queued"]) == 5
    listed = {d["client_session"]: d for d in await pending(api)}
    evidence = listed["s-evidence"]["evidence"]
    assert list(evidence) == ["error", "failed", "change", "command"]
    assert evidence == EVIDENCED["evidence"]
    assert listed["s-convention"]["kind"] == "convention"
    assert listed["s-convention"]["evidence"] == {"shown": CONVENTION["evidence"]["shown"]}
    assert listed[RULE["client_session"]]["evidence"] == {"said": "no, never edit those files"}
    assert listed[FIX["client_session"]]["evidence"] == {}  # none sent
    assert listed[FIX["client_session"]]["key"] is None
    assert listed["s-distilled"]["evidence"] == {"distilled_by": "codex"}  # import --distill


async def test_evidence_holds_its_keys_only_each_a_short_clean_text(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    for evidence, field in (
        ({"error": "E", "foo": "bar"}, "drafts.1.evidence.foo"),
        ({"error": "x" * 601}, "drafts.1.evidence.error"),
        ({"said": "look\u200bhere"}, "drafts.1.evidence.said"),
        ({"shown": 3}, "drafts.1.evidence.shown"),
    ):
        refused = await api.post("/drafts", json={"drafts": [FIX, {**FIX, "evidence": evidence}]})
        assert refused.status_code == 422, refused.text
        assert refused.json()["errors"][0]["field"] == field
    refused = await api.post("/drafts", json={"drafts": [{**FIX, "key": "one\ntwo"}]})
    assert refused.json()["errors"][0]["field"] == "drafts.0.key"
    assert await db.fetchval("SELECT count(*) FROM drafts") == 0
    # Trimmed as a text is; a blank one is no evidence.
    padded = {"error": "  E: boom \n", "said": "   ", "command": None}
    await queue(api, {**FIX, "evidence": padded})
    assert (await pending(api))[0]["evidence"] == {"error": "E: boom"}


async def test_a_credential_in_evidence_leaves_the_draft_out(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    leaked = {**EVIDENCED, "evidence": {"error": f"401: bad credentials {GITHUB_TOKEN}"}}
    done = await queue(api, RULE, leaked)
    assert len(done["queued"]) == 1 and [r["index"] for r in done["refused"]] == [1]
    assert "evidence.error" in done["refused"][0]["reason"]
    assert GITHUB_TOKEN not in done["refused"][0]["reason"]
    stored = await db.fetchval("SELECT string_agg(text || evidence::text, ' ') FROM drafts")
    assert GITHUB_TOKEN not in stored
    keyed = {**RULE, "text": "Another rule: always pin the versions.", "key": GITHUB_TOKEN}
    assert [r["index"] for r in (await queue(api, keyed))["refused"]] == [0]


async def test_one_lesson_keyed_by_its_client_is_queued_once(api: httpx.AsyncClient) -> None:
    """Seen in three sessions, worded three ways: the client's key makes it one draft; the
    same key of another kind or repository is another lesson."""
    key = "fix:pytest -q:AssertionError calc"
    first = {**EVIDENCED, "key": key}
    again = {**first, "client_session": "s-2", "text": first["text"] + " (again)"}
    later = {**first, "client_session": "s-3", "text": "`pytest -q` fails until calc.py adds."}
    done = await queue(api, first, again)
    assert len(done["queued"]) == 1 and done["known"] == 1
    assert (await queue(api, later))["known"] == 1
    other_repo = {**later, "source_repo": "acme/web"}
    other_kind = {**later, "kind": "convention"}
    assert len((await queue(api, other_repo, other_kind))["queued"]) == 2
    listed = await pending(api, source_repo="acme/api")
    assert sorted((d["kind"], d["text"], d["key"]) for d in listed) == [
        ("convention", later["text"], key),
        ("fix", first["text"], key),
    ]
    # Without a key, the text is the lesson, as before.
    assert (await queue(api, {**FIX}, {**FIX, "client_session": "s-4"}))["known"] == 1


async def test_a_kept_draft_keeps_its_evidence_as_its_context(api: httpx.AsyncClient) -> None:
    (draft_id,) = (await queue(api, EVIDENCED))["queued"]
    kept = await api.post(f"/drafts/{draft_id}/keep")
    assert kept.status_code == 201, kept.text
    context = kept.json()["memory"]["context"]
    assert (
        context.splitlines()[0] == "Drafted from a codex session of 2026-10-02, kept by a person."
    )
    assert "error: tests/test_calc.py:12: AssertionError: assert 3 == 4" in context
    assert "passes now: pytest -q" in context
    # So the error it met finds the lesson again.
    found = await api.post("/search", json={"q": "AssertionError assert 3 == 4 add(1, 1)"})
    assert [r["memory"]["id"] for r in found.json()["results"]][:1] == [kept.json()["memory"]["id"]]


async def test_evidence_of_a_session_that_read_untrusted_input_stays_out_of_the_memory(
    api: httpx.AsyncClient,
) -> None:
    """The person vouches for the lesson's text; its evidence may quote an outsider's."""
    exposed = {**EVIDENCED, "sources": ["https://example.com/fix-guide"]}
    (draft_id,) = (await queue(api, exposed))["queued"]
    kept = (await api.post(f"/drafts/{draft_id}/keep")).json()["memory"]
    assert kept["context"] == "Drafted from a codex session of 2026-10-02, kept by a person."


async def bulk_keep(app: FastAPI, *draft_ids: str) -> list[str]:
    """The console's "Keep selected" (app/console/drafts.py) with an admin's services: the
    ids of the memories kept, in the order the drafts were sent."""
    async with services_for(app.state.runtime, OPEN_PRINCIPAL) as services:
        kept = await services.drafts.keep_each([UUID(d) for d in draft_ids])
    return [str(k.outcome.memory.id) for k in kept]


@pytest.mark.single_node  # watches one PostgreSQL's lock waits
async def test_a_bulk_keep_locks_its_drafts_at_once_in_the_order_of_their_ids(
    api: httpx.AsyncClient, app: FastAPI, db: asyncpg.Connection, database_url: str
) -> None:
    """One statement locks every pending draft of a bulk keep, in the order of their ids
    whatever order the form sent them in: two overlapping bulk keeps cannot each hold a
    draft the other waits for (a deadlock); the second finds them kept and passes over."""
    low, _, high = sorted((await queue(api, FIX, RULE, EVIDENCED))["queued"])
    holder = await asyncpg.connect(database_url)
    try:
        async with holder.transaction():
            await holder.execute("SELECT 1 FROM drafts WHERE id = $1 FOR UPDATE", UUID(high))
            # Sent highest id first: it waits on `high` holding `low` already.
            keeping = asyncio.create_task(bulk_keep(app, high, low))
            waiting = (
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE '%FROM drafts%' AND pid <> pg_backend_pid()"
            )
            # Until the keep waits on the lock (or ends, wrongly): its state, not a clock.
            while not (await db.fetchval(waiting) or keeping.done()):
                pass
            assert not keeping.done() and await db.fetchval(waiting) == 1
            with pytest.raises(asyncpg.LockNotAvailableError):
                await db.execute("SELECT 1 FROM drafts WHERE id = $1 FOR UPDATE NOWAIT", UUID(low))
        kept = await keeping
    finally:
        await holder.close()
    # Kept in the order sent; the same keep again (a second tab) passes over them both.
    memories = dict(await db.fetch("SELECT memory_id::text, id::text FROM drafts"))
    assert [memories[m] for m in kept] == [high, low]
    assert await bulk_keep(app, low, high) == []
    assert await db.fetchval("SELECT count(*) FROM memories") == 2


async def test_one_draft_a_write_refuses_refuses_the_bulk_keep_named(
    api: httpx.AsyncClient, app: FastAPI, db: asyncpg.Connection
) -> None:
    """Not pending (dropped, or unknown): passed over. One a write's rules refuse (here a
    text cut to two words since it was queued): the whole keep refused, naming it."""
    fix_id, rule_id, dropped_id = (await queue(api, FIX, RULE, EVIDENCED))["queued"]
    assert (await api.post("/drafts/drop", json={"ids": [dropped_id]})).status_code == 200
    await db.execute("UPDATE drafts SET text = 'too short' WHERE id = $1", UUID(rule_id))
    with pytest.raises(InvalidInputError) as refused:
        await bulk_keep(app, fix_id, rule_id)
    assert str(refused.value).startswith(f"draft {rule_id}: ") and refused.value.field == "text"
    assert await db.fetchval("SELECT count(*) FROM memories") == 0
    assert await db.fetchval("SELECT status FROM drafts WHERE id = $1", UUID(fix_id)) == "pending"
    unknown = str(uuid4())
    assert len(await bulk_keep(app, dropped_id, unknown, fix_id)) == 1
    statuses = dict(await db.fetch("SELECT id::text, status FROM drafts"))
    assert statuses == {fix_id: "kept", rule_id: "pending", dropped_id: "dropped"}


async def test_a_page_is_grouped_reading_each_draft_once(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Near-duplicates together (app/domain/draft_groups.py), each draft's text read once
    (its content words, its statement), not once for each group it is compared with."""
    texts = [
        "Never edit the generated files; always use the make target instead.",
        "Always open a pull request; never push to main.",
        "Migrations run with alembic upgrade head before the integration tests.",
        "The staging database is reset every Sunday at two in the morning.",
        "Release tags are signed with the team's key, not a personal one.",
    ]
    drafts = [{**RULE, "client_session": f"s-{i}", "text": t} for i, t in enumerate(texts)]
    drafts.append({**RULE, "client_session": "s-again", "text": texts[0] + " Every time."})
    await queue(api, *drafts)
    reads: list[str] = []
    counted = draft_groups.read

    def read(text: str) -> draft_groups.Read:
        reads.append(text)
        return counted(text)

    monkeypatch.setattr(draft_groups, "read", read)
    async with services_for(app.state.runtime, OPEN_PRINCIPAL) as services:
        page = await services.drafts.in_groups(None, 100)
    assert sorted(reads) == sorted(str(d["text"]) for d in drafts)
    assert sorted(len(g) for g in page.groups) == [1, 1, 1, 1, 2]
