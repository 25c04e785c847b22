"""Migrations up/down/up on a live database, the search_vector trigger, start-up checks."""

from __future__ import annotations

import asyncio
import random
import string
from typing import Any

import asyncpg
import httpx
import pytest

from app.config import Settings
from app.db.migrations import downgrade, head_revision, upgrade_head_async
from app.embeddings.base import Embedder
from app.embeddings.hashing import HashEmbedder
from app.main import create_app
from app.startup import StartupError
from tests.conftest import running


async def _tables(url: str) -> set[str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {r["tablename"] for r in rows}
    finally:
        await conn.close()


async def test_upgrade_downgrade_upgrade_on_a_live_database(scratch_database: Any) -> None:
    import asyncio

    url = await scratch_database("agent_memory_migrations")
    await upgrade_head_async(url)
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "INSERT INTO memories (content, content_hash)"
            " VALUES ('kept', memory_content_hash('kept'))"
        )
    finally:
        await conn.close()
    assert "memories" in await _tables(url)

    await asyncio.to_thread(downgrade, url, "base")
    assert await _tables(url) == {"alembic_version"}

    await upgrade_head_async(url)
    conn = await asyncpg.connect(url)
    try:
        assert await conn.fetchval("SELECT version_num FROM alembic_version") == head_revision()
        indexes = {
            r["indexname"]
            for r in await conn.fetch(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'memories'"
            )
        }
    finally:
        await conn.close()
    assert {
        "memories_dedup_key",
        "memories_keyword_key",
        "memories_embedding_hnsw",
        "memories_archived_key",
    } <= indexes


async def test_access_counts_move_beside_the_memories_and_back(scratch_database: Any) -> None:
    """Migration 0030 carries every count into memory_access, and its downgrade back."""
    url = await scratch_database("agent_memory_access_counts")
    await upgrade_head_async(url)
    await asyncio.to_thread(downgrade, url, "0029")
    counts = "SELECT content, access_count, last_accessed_at IS NOT NULL FROM memories"
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "INSERT INTO memories (tenant_id, content, content_hash, access_count,"
            " last_accessed_at) VALUES"
            " ('a', 'read', memory_content_hash('read'), 3, now()),"
            " ('b', 'unread', memory_content_hash('unread'), 0, NULL)"
        )
        before = sorted(tuple(r) for r in await conn.fetch(counts))
        await upgrade_head_async(url)
        moved = await conn.fetch("SELECT tenant_id, access_count FROM memory_access")
        assert [tuple(r) for r in moved] == [("a", 3)]  # a memory never read has no row
        await asyncio.to_thread(downgrade, url, "0029")
        assert sorted(tuple(r) for r in await conn.fetch(counts)) == before
    finally:
        await conn.close()


async def test_backfill_fills_search_vector_for_existing_rows(scratch_database: Any) -> None:
    import asyncio

    url = await scratch_database("agent_memory_backfill")
    await upgrade_head_async(url)
    await asyncio.to_thread(downgrade, url, "0001")
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "INSERT INTO memories (content, content_hash, category)"
            " VALUES ('Running migrations', memory_content_hash('Running migrations'), 'ops')"
        )
    finally:
        await conn.close()
    await upgrade_head_async(url)
    conn = await asyncpg.connect(url)
    try:
        vector = await conn.fetchval("SELECT search_vector::text FROM memories")
    finally:
        await conn.close()
    assert vector == "'migrat':2A 'op':3B 'run':1A"


async def test_trigger_keeps_weighted_stemmed_search_vector(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    response = await api.post(
        "/memories",
        json={
            "content": "Running checkRateLimit",
            "category": "Throttling",
            "tags": ["APIs"],
            "source_repo": None,
        },
    )
    memory_id = response.json()["memory"]["id"]
    vector = await db.fetchval(
        "SELECT search_vector::text FROM memories WHERE id = $1::uuid", memory_id
    )
    # A = content (stemmed: running -> run), B = category, C = tags, D = camelCase words.
    assert vector == (
        "'api':4C 'check':5 'checkratelimit':2A 'limit':7 'rate':6 'run':1A 'throttl':3B"
    )
    await db.execute("UPDATE memories SET tags = '{pagination}' WHERE id = $1::uuid", memory_id)
    updated = await db.fetchval(
        "SELECT search_vector::text FROM memories WHERE id = $1::uuid", memory_id
    )
    assert "'pagin':4C" in updated and "'api'" not in updated


async def test_start_up_refuses_a_provider_of_another_dimension(database_url: str) -> None:
    settings = Settings(database_url=database_url, embedding_provider="hash", embedding_dim=64)
    app = create_app(settings, embedder=HashEmbedder(64), database_url=database_url)
    with pytest.raises(StartupError, match="stores 384-dimensional embeddings"):
        async with app.router.lifespan_context(app):
            pass


async def test_start_up_refuses_another_model_than_the_one_that_made_the_vectors(
    scratch_database: Any, embedder: Embedder
) -> None:
    url = await scratch_database("agent_memory_model_switch")
    await upgrade_head_async(url)
    first = create_app(Settings(database_url=url), embedder=embedder, database_url=url)
    async with running(first):  # records the model: a new database, no vectors yet
        pass
    conn = await asyncpg.connect(url)
    try:
        assert await conn.fetchval("SELECT name FROM embedding_model") == embedder.name
    finally:
        await conn.close()
    other = create_app(
        Settings(database_url=url, embedding_provider="hash"),
        embedder=HashEmbedder(384),  # the same dimension, another space
        database_url=url,
    )
    with pytest.raises(StartupError, match="made by local:all-MiniLM-L6-v2 but this server"):
        async with other.router.lifespan_context(other):
            pass


async def test_an_older_database_with_vectors_is_recorded_as_the_old_local_model(
    scratch_database: Any,
) -> None:
    url = await scratch_database("agent_memory_before_the_record")
    await upgrade_head_async(url)
    await asyncio.to_thread(downgrade, url, "0014")
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "INSERT INTO memories (content, content_hash, embedding)"
            " VALUES ('made before the record', 'h', $1::vector)",
            "[" + ",".join(["0.05"] * 384) + "]",
        )
        await upgrade_head_async(url)
        assert await conn.fetchval("SELECT name FROM embedding_model") == "local:all-MiniLM-L6-v2"
    finally:
        await conn.close()


async def test_start_up_refuses_an_unmigrated_database(scratch_database: Any) -> None:
    url = await scratch_database("agent_memory_unmigrated")
    settings = Settings(database_url=url, embedding_provider="hash")
    app = create_app(settings, embedder=HashEmbedder(384), database_url=url)
    with pytest.raises(Exception, match=r"vector|agent-memory migrate"):
        async with app.router.lifespan_context(app):
            pass


@pytest.mark.citus  # there the storage is set on each shard
async def test_a_memorys_vector_and_lexemes_stay_in_its_row(db: asyncpg.Connection) -> None:
    """A search reads both for every row it weighs, and each read out of line is a TOAST
    lookup; the text goes out of line instead. The row is over the 2 KB at which PostgreSQL
    starts moving values out, and the vector its largest value."""
    rng = random.Random(3)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(8)) for _ in range(30)]
    content = " ".join(words)
    vector = [rng.gauss(0, 1) for _ in range(384)]
    await db.execute(
        "INSERT INTO memories (tenant_id, content, content_hash, embedding)"
        " VALUES ('layout-test', $1, memory_content_hash($1), $2)",
        content,
        vector,
    )
    try:
        row = await db.fetchrow(
            """
            SELECT pg_column_toast_chunk_id(embedding) AS vector_out,
                   pg_column_toast_chunk_id(search_vector) AS lexemes_out,
                   pg_column_toast_chunk_id(content) IS NOT NULL AS text_out
            FROM memories WHERE tenant_id = 'layout-test'
            """
        )
        assert dict(row) == {"vector_out": None, "lexemes_out": None, "text_out": True}
    finally:
        await db.execute("DELETE FROM memories WHERE tenant_id = 'layout-test'")
