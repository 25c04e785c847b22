"""The SQL functions' present text lives in app/repository/functions/, one file each: the
database migrated from history must hold exactly what the files say."""

from __future__ import annotations

import re

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


MIGRATIONS = FUNCTIONS.parents[2] / "migrations"


def test_no_migration_installs_todays_text() -> None:
    """A migration runs the SQL it shipped with, whatever the code says later: it reads no
    file of app/ (nor calls into it for SQL); each function text it installs is its own
    revision's, kept under migrations/sql/<function>/<revision>.sql, and a downgrade's is an
    earlier revision's, never a later one's."""
    for path in sorted((MIGRATIONS / "versions").glob("*.py")):
        text = path.read_text()
        code = "\n".join(  # after the module's docstring, comments left out
            line
            for line in text.split('"""', 2)[2].splitlines()
            if not line.strip().startswith("#")
        )
        revision = path.name.split("_", 1)[0]
        for todays in ("repository/functions", "FUNCTIONS", "load_function"):
            assert todays not in code, (path.name, todays)
        for name, at in re.findall(r'function_as_made\("([a-z_]+)"(?:, "(\d{4})")?\)', text):
            made = MIGRATIONS / "sql" / name / f"{at or revision}.sql"
            assert made.is_file() and (at or revision) <= revision, (path.name, name, at)
    for made in (MIGRATIONS / "sql").glob("*/*.sql"):  # each the text its revision installs
        using = list((MIGRATIONS / "versions").glob(f"{made.stem}_*.py"))
        assert using and f'function_as_made("{made.parent.name}")' in using[0].read_text(), made
