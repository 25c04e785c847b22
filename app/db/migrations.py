"""Alembic, driven from code: upgrade to head, and tell whether a database is at head."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(database_url: str) -> Config:
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    config.attributes["database_url"] = database_url
    return config


def upgrade_head(database_url: str) -> None:
    """Blocking: call from a thread or before the event loop starts."""
    command.upgrade(alembic_config(database_url), "head")


async def upgrade_head_async(database_url: str) -> None:
    """Alembic's env runs its own event loop: give it a thread of its own."""
    await asyncio.to_thread(upgrade_head, database_url)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)


# pg_attribute.attstorage, by the name SET STORAGE takes.
STORAGE_NAMES = {"p": "PLAIN", "e": "EXTERNAL", "m": "MAIN", "x": "EXTENDED"}


def set_storage(storage: Mapping[str, str], on_citus: bool) -> list[str]:
    """Statements, for one transaction, that give these columns of `memories` this storage
    (where a value lives: in the row or out of it, in TOAST). Citus refuses SET STORAGE on
    a distributed table: there the coordinator's table, whose definition a new shard
    copies, and then each shard are altered."""
    columns = ", ".join(f"ALTER COLUMN {name} SET STORAGE {kind}" for name, kind in storage.items())
    if not on_citus:
        return [f"ALTER TABLE memories {columns}"]
    return [
        "SET LOCAL citus.enable_ddl_propagation TO off",
        f"ALTER TABLE memories {columns}",
        "SET LOCAL citus.enable_ddl_propagation TO on",
        f"""DO $do$
            DECLARE refused text;
            BEGIN
                SELECT string_agg(shardid || ': ' || result, '; ') INTO refused
                  FROM run_command_on_shards('memories', 'ALTER TABLE %s {columns}')
                 WHERE NOT success;
                IF refused IS NOT NULL THEN
                    RAISE EXCEPTION 'shards refused the storage change: %', refused;
                END IF;
            END
            $do$""",
    ]


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config("unused")).get_current_head()
    assert head is not None
    return head


async def current_revision(conn: Any) -> str | None:
    exists = await conn.fetchval("SELECT to_regclass('alembic_version') IS NOT NULL")
    if not exists:
        return None
    value: str | None = await conn.fetchval("SELECT version_num FROM alembic_version")
    return value


async def recorded_embedding_model(conn: Any, current: str) -> str:
    """The model recorded as having made the stored vectors, recording `current` when none
    is (a new database; migration 0015 records an older one's)."""
    name: str = await conn.fetchval(
        """
        WITH recorded AS (
            INSERT INTO embedding_model (name) VALUES ($1)
            ON CONFLICT (singleton) DO NOTHING
            RETURNING name
        )
        SELECT coalesce((SELECT name FROM recorded), (SELECT name FROM embedding_model))
        """,
        current,
    )
    return name


async def stored_embedding_model(conn: Any) -> str | None:
    """The model recorded as having made the stored vectors, if any (records nothing)."""
    name: str | None = await conn.fetchval("SELECT name FROM embedding_model")
    return name


async def embedding_dimension(conn: Any) -> int | None:
    """The dimension the memories.embedding column was created with."""
    value: int | None = await conn.fetchval(
        """
        SELECT a.atttypmod FROM pg_attribute a
        WHERE a.attrelid = 'memories'::regclass AND a.attname = 'embedding'
        """
    )
    return value
