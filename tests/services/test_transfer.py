"""Export and import between two real servers: nothing lost, nothing duplicated, and a
bad file writes nothing."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from pgvector.asyncpg import register_vector

from app.cli import main as cli_main
from app.config import Settings
from app.db.migrations import upgrade_head_async
from app.domain.memory import embedding_text
from app.embeddings.base import Embedder
from app.embeddings.hashing import HashEmbedder
from app.main import create_app
from app.services.keys import KeyService
from tests.conftest import running, serving
from tests.helpers.credentials import GITHUB_TOKEN
from tests.helpers.export_files import NDJSON_BODY, export_file

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

SESSION = {"id": str(uuid.UUID(int=1)), "started_at": "2026-11-01T09:00:00+00:00"}

# What a round trip must keep, per memory (ids may differ; links are compared by content).
KEPT = """
    m.content, m.memory_type, m.category, m.tags, m.source_repo, m.trust_level, m.confidence,
    m.pinned, m.source, m.name, m.metadata, m.context, m.observation_count, m.relevance_score,
    (SELECT a.access_count FROM memory_access a
        WHERE a.tenant_id = m.tenant_id AND a.memory_id = m.id) AS access_count,
    m.archived_at IS NOT NULL AS archived, m.created_at,
    (SELECT s.content FROM memories s WHERE s.tenant_id = m.tenant_id
        AND s.id = m.superseded_by) AS superseded_by_content
"""


async def kept(conn: asyncpg.Connection) -> list[dict[str, Any]]:
    rows = await conn.fetch(f"SELECT {KEPT} FROM memories m ORDER BY m.content")
    return [dict(r) for r in rows]


@asynccontextmanager
async def second_server(
    scratch_database: Any, name: str, embedder: Embedder, **settings: Any
) -> AsyncIterator[tuple[str, asyncpg.Connection]]:
    url = await scratch_database(name)
    await upgrade_head_async(url)
    config = Settings(database_url=url, db_pool_min=1, db_pool_max=5, **settings)
    application = create_app(config, embedder=embedder, database_url=url)
    conn = await asyncpg.connect(url)
    await register_vector(conn)
    try:
        async with running(application), serving(application) as base:
            yield base, conn
    finally:
        await conn.close()


@pytest.fixture
async def other(
    scratch_database: Any, embedder: Embedder
) -> AsyncIterator[tuple[str, asyncpg.Connection]]:
    """A second server with the same model, on a database of its own."""
    async with second_server(scratch_database, "agent_memory_import", embedder) as pair:
        yield pair


@pytest.fixture
async def other_model(scratch_database: Any) -> AsyncIterator[tuple[str, asyncpg.Connection]]:
    """A second server whose model is another one (same size)."""
    async with second_server(scratch_database, "agent_memory_other", HashEmbedder(384)) as pair:
        yield pair


async def populate(base: str) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        stored = []
        for body in (
            {"content": "Run migrations before the app starts", "memory_type": "decision",
             "tags": ["deploy", "db"], "trust_level": "user", "pinned": True,
             "metadata": {"ticket": "OPS-7", "nested": {"a": [1, 2]}}, "source_repo": None},
            {"content": "The flaky test came from a shared temp dir",
             "memory_type": "error_pattern", "source_repo": "acme/api",
             "context": "CI run 4411", "category": "testing"},
            {"content": "Old: deploy on Fridays", "source_repo": "acme/api", "name": "deploys"},
            {"content": "Prefer keyset paging over OFFSET", "memory_type": "code_pattern",
             "confidence": "high", "source_repo": None},
        ):  # fmt: skip
            answer = await http.post("/memories", json=body)
            assert answer.status_code == 201, answer.text
            stored.append(answer.json()["memory"])
        # known content again: observation_count 2
        assert (
            await http.post(
                "/memories", json={"content": stored[3]["content"], "source_repo": None}
            )
        ).is_success
        superseded = await http.post(
            f"/memories/{stored[2]['id']}/supersede",
            json={"content": "New: never deploy on Fridays", "source_repo": "acme/api"},
        )
        assert superseded.status_code == 201, superseded.text
        hit = await http.get("/search", params={"q": "keyset paging"})  # an access counted
        assert hit.json()["results"]
        started = await http.post(
            "/sessions", json={"source_repo": "acme/api", "agent": "claude-code",
                               "git_commit": "3f9a2c1d8e7b"},
        )  # fmt: skip
        ended = await http.post(
            f"/sessions/{started.json()['session_id']}/end",
            json={"status": "completed", "summary": "Fixed the flaky upload test",
                  "key_changes": [{"file": "tests/test_upload.py", "action": "edit"}]},
        )  # fmt: skip
        assert ended.status_code == 200, ended.text


def cli(*args: str) -> int:
    return cli_main(list(args))


async def test_round_trip_between_two_servers_loses_nothing(
    served: str, db: asyncpg.Connection, other: tuple[str, asyncpg.Connection], tmp_path: Path
) -> None:
    there, there_db = other
    await populate(served)
    await db.execute(
        "UPDATE memories SET archived_at = now() WHERE content = 'Prefer keyset paging over OFFSET'"
    )
    exported = tmp_path / "memories.jsonl"
    assert await asyncio.to_thread(cli, "export", "--any-repo", "--url", served, "--embeddings",
                                   "-o", str(exported)) == 0  # fmt: skip
    lines = exported.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["count"] == len(lines) - 2 == 5 and header["sessions"] == 1
    assert json.loads(lines[-1])["session"]["summary"] == "Fixed the flaky upload test"
    assert header["embedding_model"].startswith("local:") and header["dimensions"] == 384

    assert await asyncio.to_thread(cli, "import", "--url", there, "--json", str(exported)) == 0
    assert await kept(there_db) == await kept(db)
    # Sessions (with their key changes) came along: the next snapshot there shows them.
    session = (
        "SELECT id, source_repo, status, summary, key_changes, git_commit, ended_at FROM sessions"
    )
    assert [dict(r) for r in await there_db.fetch(session)] == [
        dict(r) for r in await db.fetch(session)
    ]
    # the same model: the file's vectors are kept as they are
    vectors = "SELECT content, embedding FROM memories ORDER BY content"
    here_vectors = [(r[0], r[1].to_list()) for r in await db.fetch(vectors)]
    assert [(r[0], r[1].to_list()) for r in await there_db.fetch(vectors)] == here_vectors

    # Again: the same memories are already here, and a restore twice changes nothing: no
    # row, no count, no version, no link.
    before = await there_db.fetch("SELECT * FROM memories ORDER BY id")
    async with httpx.AsyncClient(base_url=there) as http:
        again = await http.post(
            "/memories/import",
            content=exported.read_bytes(),
            headers={"Content-Type": "application/x-ndjson"},
        )
    assert again.status_code == 200, again.text
    assert again.json() == {
        "memories": 5, "stored": 0, "reinforced": 0, "already_here": 5, "reembedded": 0,
        "linked": 1, "unresolved_links": 0, "quarantined": 0, "sessions": 0,
    }  # fmt: skip
    assert [dict(r) for r in await there_db.fetch("SELECT * FROM memories ORDER BY id")] == [
        dict(r) for r in before
    ]
    # Known content under another id (written there on its own) is a new observation.
    line = json.loads(lines[1])
    async with httpx.AsyncClient(base_url=there) as http:
        assert (await http.delete(f"/memories/{line['id']}")).status_code == 204
        body = {"content": line["content"], "source_repo": line["source_repo"]}
        assert (await http.post("/memories", json=body)).status_code == 201
        third = await http.post(
            "/memories/import",
            content=exported.read_bytes(),
            headers={"Content-Type": "application/x-ndjson"},
        )
    assert third.json()["already_here"] == 4 and third.json()["reinforced"] == 1


async def test_import_reembeds_vectors_of_another_model_or_none(
    served: str, other_model: tuple[str, asyncpg.Connection], tmp_path: Path
) -> None:
    there, there_db = other_model
    await populate(served)
    for flags in (["--embeddings"], []):
        exported = tmp_path / "memories.jsonl"
        assert await asyncio.to_thread(cli, "export", "--any-repo", "--url", served, *flags,
                                       "-o", str(exported)) == 0  # fmt: skip
        async with httpx.AsyncClient(base_url=there, timeout=60) as http:
            report = await http.post(
                "/memories/import", content=exported.read_bytes(), headers=NDJSON_BODY
            )
        assert report.status_code == 200, report.text
        assert report.json()["reembedded"] == 5
    expected = HashEmbedder(384)
    rows = await there_db.fetch("SELECT content, name, category, context, embedding FROM memories")
    for row in rows:
        text = embedding_text(row["content"], row["name"], row["category"], row["context"])
        assert row["embedding"].to_list() == pytest.approx(await expected.embed_one(text), abs=1e-6)


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        (b"", 422, "body"),
        (b'{"format": "something-else", "version": 1}\n', 422, "header.format"),
        (b'{"format": "agent-memory/export", "version": 9}\n', 422, "header.version"),
        (export_file({"content": "fine, a memory"}) + b"not json\n", 422, "lines.3"),
        (export_file({"content": "one"}, {"content": "two", "trust_level": "root"}), 422,
         "lines.3.trust_level"),
        (export_file({"content": "one"}, {"content": "two", "created_at": "2026-01-01T00:00:00"}),
         422, "lines.3.created_at"),
        (export_file({"content": "one"}, {"content": "two", "access_count": -1}), 422,
         "lines.3.access_count"),
        (export_file({"content": "one", "colour": "red"}), 422, "lines.2.colour"),
        (export_file({"content": "one\x00"}), 422, "lines.2.content"),
        (export_file({"content": "x" * 3_000}), 413, "lines.2"),
        # The same rules as every other door: no hidden text, no credentials.
        (export_file({"content": "fine\u200bhidden"}), 422, "lines.2.content"),
        (export_file({"content": "ok", "metadata": {"t": GITHUB_TOKEN}}), 422,
         "lines.2.metadata.t"),
        # A session line's every string, its task and agent too.
        (export_file({"session": {**SESSION, "task": f"use {GITHUB_TOKEN}"}}), 422, "lines.2.task"),
        (export_file({"session": {**SESSION, "agent": GITHUB_TOKEN}}), 422, "lines.2.agent"),
        (export_file({"content": "ok", "content_hash": "not-a-hash"}), 422,
         "lines.2.content_hash"),
    ],
)  # fmt: skip
async def test_a_bad_file_is_refused_whole_and_names_the_line(
    scratch_database: Any, embedder: Embedder, body: bytes, status: int, field: str
) -> None:
    # A line may hold at most max_body_bytes: small here for the oversized case.
    server = second_server(scratch_database, "agent_memory_refusals", embedder,
                           max_body_bytes=2048)  # fmt: skip
    async with server as (base, conn):
        async with httpx.AsyncClient(base_url=base) as http:
            answer = await http.post("/memories/import", content=body, headers=NDJSON_BODY)
        assert answer.status_code == status, answer.text
        assert [e["field"] for e in answer.json()["errors"]] == [field]
        assert await conn.fetchval("SELECT count(*) FROM memories") == 0


async def test_import_takes_an_admin_key_and_export_a_reader_key(
    served: str, db: asyncpg.Connection
) -> None:
    keys = KeyService.on_connection(db)
    agent = (await keys.create("default", "agent", "agent")).key
    reader = (await keys.create("default", "reader", "reader")).key
    body = export_file({"content": "an agent may not restore a backup"})
    async with httpx.AsyncClient(base_url=served) as http:
        refused = await http.post(
            "/memories/import",
            content=body,
            headers={"Authorization": f"Bearer {agent}", **NDJSON_BODY},
        )
        exported = await http.get("/memories/export", headers={"Authorization": f"Bearer {reader}"})
    assert refused.status_code == 403
    assert exported.status_code == 200
    assert json.loads(exported.text.splitlines()[0])["count"] == 0
    assert await db.fetchval("SELECT count(*) FROM memories") == 0


async def test_an_import_embedded_while_written_keeps_each_vector_with_its_text(
    api: httpx.AsyncClient, db: asyncpg.Connection, embedder: Embedder
) -> None:
    # Each chunk of lines is embedded while the chunk before it is written.
    lines = [{"content": f"Imported note {i}: cache {i % 5} warmed in {i} s"} for i in range(150)]
    report = await api.post("/memories/import", content=export_file(*lines), headers=NDJSON_BODY)
    assert report.status_code == 200, report.text
    assert (report.json()["stored"], report.json()["reembedded"]) == (150, 150)
    for i in (0, 63, 64, 128, 149):
        row = await db.fetchrow(
            "SELECT content, name, category, context, embedding FROM memories WHERE content = $1",
            lines[i]["content"],
        )
        text = embedding_text(row["content"], row["name"], row["category"], row["context"])
        assert row["embedding"].to_list() == pytest.approx(await embedder.embed_one(text), abs=1e-5)
    # A bad line in the last chunk, after two were written: nothing of the file is kept.
    await db.execute("DELETE FROM memories")
    lines[140] = {"content": f"the token is {GITHUB_TOKEN}"}
    refused = await api.post("/memories/import", content=export_file(*lines), headers=NDJSON_BODY)
    assert refused.status_code == 422
    assert [e["field"] for e in refused.json()["errors"]] == ["lines.142.content"]
    assert await db.fetchval("SELECT count(*) FROM memories") == 0
