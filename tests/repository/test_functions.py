"""The SQL functions' present text lives in app/repository/functions/, one file each: the
database migrated from history must hold exactly what the files say."""

from __future__ import annotations

import asyncpg

from app.db.migrations import FUNCTIONS

OURS = """
SELECT p.proname, pg_get_functiondef(p.oid) AS definition
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND p.proname LIKE 'memor%' ORDER BY 1
"""


async def test_every_function_is_its_file(db: asyncpg.Connection) -> None:
    migrated = {r["proname"]: r["definition"] for r in await db.fetch(OURS)}
    files = {path.stem: path.read_text() for path in FUNCTIONS.glob("*.sql")}
    assert sorted(files) == sorted(migrated), "one file per function, and no other"
    for name, text in files.items():
        transaction = db.transaction()
        await transaction.start()
        try:
            await db.execute(text)  # CREATE OR REPLACE: unchanged when the file is the present
            (rewritten,) = [r["definition"] for r in await db.fetch(OURS) if r["proname"] == name]
        finally:
            await transaction.rollback()
        assert rewritten == migrated[name], f"{name}.sql differs from the migrated function"
