"""Each SQL function's text is kept per revision that made it, never edited once shipped:
migrations/sql/<function>/<revision>.sql. The newest is the function as it is: the database
migrated from history must hold exactly what those files say."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

from app.domain.filters import MemoryFilter
from app.repository.filters import FILTER_FIELDS, scope_parts, served_sql
from app.repository.sql import named

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
OURS = """
SELECT p.proname, pg_get_functiondef(p.oid) AS definition
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND p.proname LIKE 'memor%' ORDER BY 1
"""


def present_texts() -> dict[str, str]:
    """Each function's newest text: its file of the latest revision (a function whose newest
    file drops it is gone)."""
    newest = {
        folder.name: max(folder.glob("*.sql")).read_text()
        for folder in (MIGRATIONS / "sql").iterdir()
        if folder.is_dir()
    }
    return {name: text for name, text in newest.items() if not _DROPS.search(text)}


_DROPS = re.compile(r"^DROP FUNCTION ", re.M)


async def test_every_function_is_its_newest_file(db: asyncpg.Connection) -> None:
    migrated = {r["proname"]: r["definition"] for r in await db.fetch(OURS)}
    files = present_texts()
    assert sorted(files) == sorted(migrated), "a folder of versions per function, and no other"
    for name, text in files.items():
        transaction = db.transaction()
        await transaction.start()
        try:
            await db.execute(text)  # CREATE OR REPLACE: unchanged when the file is the present
            (rewritten,) = [r["definition"] for r in await db.fetch(OURS) if r["proname"] == name]
        finally:
            await transaction.rollback()
        assert rewritten == migrated[name], f"the newest {name} differs from the migrated one"


def test_no_migration_installs_todays_text() -> None:
    """A migration runs the SQL it shipped with, whatever the code says later: it imports
    nothing of app/; each function text it installs is its own revision's, and a
    downgrade's is an earlier revision's, never a later one's."""
    for path in sorted((MIGRATIONS / "versions").glob("*.py")):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import) app\b", text, re.M), path.name
        revision = path.name.split("_", 1)[0]
        for name, at in re.findall(r'function_as_made\("([a-z_]+)"(?:, "(\d{4})")?\)', text):
            made = MIGRATIONS / "sql" / name / f"{at or revision}.sql"
            assert made.is_file() and (at or revision) <= revision, (path.name, name, at)
    for made in (MIGRATIONS / "sql").glob("*/*.sql"):  # each the text its revision installs
        using = list((MIGRATIONS / "versions").glob(f"{made.stem}_*.py"))
        assert using and f'function_as_made("{made.parent.name}")' in using[0].read_text(), made


async def test_the_filter_is_the_database_type_field_by_field(db: asyncpg.Connection) -> None:
    """FILTER_FIELDS writes memory_filter's value positionally: its order is the type's."""
    attributes = await db.fetch(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type"
        " FROM pg_attribute a WHERE a.attrelid = 'memory_filter'::regclass AND a.attnum > 0"
        " AND NOT a.attisdropped ORDER BY a.attnum"
    )
    declared = [(name, sql_type) for name, sql_type, _ in FILTER_FIELDS]
    spelled = {"timestamptz": "timestamp with time zone"}
    assert [(a["attname"], a["type"]) for a in attributes] == [
        (name, spelled.get(sql_type, sql_type)) for name, sql_type in declared
    ]


async def test_the_filter_predicate_is_planned_as_its_expressions(db: asyncpg.Connection) -> None:
    """memory_matches() is inlined: no call is left in the plan, a repository's scope is
    counted from the index alone (the partial index's predicate still implied), and a
    condition only the predicate states (since) is an index condition of a list."""
    values: dict[str, Any] = {"tenant_id": "inlined"}

    def bind(value: Any, name: str) -> str:
        values[name] = value
        return f":{name}"

    scoped = MemoryFilter(source_repo="acme/api", include_global=False, since=datetime.now(UTC))
    (part,) = scope_parts(replace(scoped, since=None), bind, tenant=":tenant_id")
    listed = served_sql(scoped, bind, tenant=":tenant_id")
    plans = []
    planned = db.transaction()
    await planned.start()
    try:
        # Rows enough that the plan weighs the indexes' sizes (on an empty table each index
        # costs the same, and which one the planner takes is a tie's): rolled back after.
        await db.execute(
            "INSERT INTO memories (tenant_id, content, content_hash, source_repo)"
            " SELECT 'inlined', 'row ' || i, memory_content_hash('row ' || i), 'repo ' || (i % 20)"
            " FROM generate_series(1, 2000) AS i"
        )
        await db.execute("ANALYZE memories")
        await db.execute("SET LOCAL enable_seqscan = off")
        for statement in (
            f"SELECT count(*) FROM memories m WHERE {part}",
            f"SELECT m.id FROM memories m WHERE {listed} ORDER BY m.created_at DESC LIMIT 5",
        ):
            used = {name: v for name, v in values.items() if f":{name}" in statement}
            sql, *args = named(statement, used)
            plans.append("\n".join(r[0] for r in await db.fetch("EXPLAIN " + sql, *args)))
    finally:
        await planned.rollback()  # the rows and their statistics with them
    counted, listing = plans
    assert "memory_matches" not in counted + listing
    assert "Index Only Scan" in counted, counted  # no heap: the partial predicate holds
    conditions = [line for line in listing.splitlines() if "Index Cond" in line]
    assert any("created_at >=" in line for line in conditions), listing
