"""The review commands against a running server: `agent-memory drafts` lists the queue,
keeps one rewritten, drops and restores; `agent-memory tidy` computes the proposals, lists
a kind and accepts one, then undoes it."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import httpx
import pytest

from app.cli import main
from tests.services.test_draft_queue import FIX, RULE
from tests.services.test_tidy import SAME
from tests.services.test_transfer import NDJSON_BODY, export_file


async def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert await asyncio.to_thread(main, list(argv)) == 0
    return capsys.readouterr().out


async def test_the_drafts_command(
    served: str, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    async with httpx.AsyncClient(base_url=served) as api:
        fix_id, rule_id = (await api.post("/drafts", json={"drafts": [FIX, RULE]})).json()["queued"]
    listed = await run(capsys, "drafts", "--url", served)
    assert json.dumps(RULE["text"]) in listed and "https://example.com/setup" in listed
    kept = await run(capsys, "drafts", "keep", rule_id, "--text", "Run `make gen`; never edit"
                     " the generated files.", "--url", served)  # fmt: skip
    assert kept.startswith("kept as memory")
    assert await db.fetchval("SELECT trust_level FROM memories") == "user"
    assert "dropped 1 of 1" in await run(capsys, "drafts", "drop", fix_id, "--url", served)
    assert "pending again" in await run(capsys, "drafts", "restore", fix_id, "--url", served)
    page = json.loads(await run(capsys, "drafts", "--json", "--url", served))
    assert [d["id"] for d in page["drafts"]] == [fix_id]


async def test_the_tidy_command(
    served: str, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [{"content": c, "memory_type": "learning", "source_repo": "acme/api"} for c in SAME]
    async with httpx.AsyncClient(base_url=served) as api:
        await api.post("/memories/import", content=export_file(*lines), headers=NDJSON_BODY)
    assert "1 merge" in await run(capsys, "tidy", "refresh", "--url", served)
    assert await asyncio.to_thread(main, ["tidy", "--url", served]) == 0
    listed = capsys.readouterr()
    assert listed.out == ""  # no kind is listed by default, and it says what waits
    assert "not listed: 1 merge" in listed.err
    listed = json.loads(await run(capsys, "tidy", "--kind", "merge", "--json", "--url", served))
    (proposal,) = listed["proposals"]
    accepted = await run(capsys, "tidy", "accept", proposal["id"], "--url", served)
    assert accepted.strip().endswith("accepted")
    superseded = "SELECT count(*) FROM memories WHERE superseded_by IS NOT NULL"
    assert await db.fetchval(superseded) == 1
    assert "pending" in await run(capsys, "tidy", "undo", proposal["id"], "--url", served)
    assert await db.fetchval(superseded) == 0
