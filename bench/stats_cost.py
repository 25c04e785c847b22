"""What `GET /stats` costs at a tenant's size: this revision's statement beside another's
(`git show REV:app/repository/stats.py`), in turn, on the same rows.

The rows are written by SQL (no embeddings: /stats reads none), over 50 repositories and
90 days, then each statement runs ROUNDS times in alternation, for the whole tenant and for
one repository.

    .venv/bin/python -m bench.stats_cost [--rows 100000] [--against HEAD]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import asyncpg

from app.repository.lifecycle import PruneRules
from app.repository.sql import named
from app.repository.stats import _STATS
from bench.support import as_of, fresh_database

ROUNDS = 20

_ROWS = """
INSERT INTO memories (tenant_id, content, memory_type, trust_level, confidence, source_repo,
                      content_hash, created_at, archived_at, pinned)
SELECT 'bench', 'memory number ' || n, (ARRAY['decision','learning','error_pattern',
       'code_pattern','strategy'])[1 + n % 5], (ARRAY['agent','user'])[1 + n % 2],
       (ARRAY['low','medium','high'])[1 + n % 3],
       CASE WHEN n % 10 = 0 THEN NULL ELSE 'acme/repo-' || (n % 50) END,
       memory_content_hash('memory number ' || n),
       now() - make_interval(secs => n::float8 / $1 * 7776000),
       CASE WHEN n % 17 = 0 THEN now() END, n % 101 = 0
FROM generate_series(1, $1) AS n
"""


def statement_of(revision: str, one_repository: bool) -> str:
    """The `_STATS` text of a revision's app/repository/stats.py (one text, or one for the
    whole tenant and one for a repository)."""
    statement = as_of(revision, "app/repository/stats.py", "_STATS")
    return str(statement[one_repository] if isinstance(statement, dict) else statement)


async def timed(conn: asyncpg.Connection, sql: str, values: dict[str, Any]) -> float:
    """One call, as the service makes it: a prepared statement (asyncpg's cache, so the
    server may switch to a generic plan after five), in a transaction of the tenant's."""
    if ":source_repo" not in sql:
        values = {k: v for k, v in values.items() if k != "source_repo"}
    started = time.perf_counter()
    async with conn.transaction():
        await conn.execute("SELECT set_config('app.tenant_id', 'bench', true)")
        await conn.fetchrow(*named(sql, values))
    return (time.perf_counter() - started) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--against", default="HEAD", help="the revision to compare with")
    args = parser.parse_args()
    rules = PruneRules(unused_days=90, stale_days=365, stale_min_accesses=3)
    async with fresh_database("agent_memory_bench_stats") as url:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(_ROWS, args.rows)
            await conn.execute("VACUUM ANALYZE memories")  # as autovacuum leaves a table
            for scope in (None, "acme/repo-7"):
                values = {"tenant_id": "bench", "source_repo": scope} | rules.values()
                before = statement_of(args.against, scope is not None)
                current = _STATS[scope is not None]
                runs: dict[str, list[float]] = {args.against: [], "this tree": []}
                for _ in range(ROUNDS):
                    runs[args.against].append(await timed(conn, before, values))
                    runs["this tree"].append(await timed(conn, current, values))
                for name, took in runs.items():
                    print(
                        f"{scope or 'whole tenant'} ({args.rows:,} rows), {name}:"
                        f" median {statistics.median(took):.1f} ms,"
                        f" p90 {statistics.quantiles(took, n=10)[-1]:.1f} ms"
                    )
        finally:
            await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
