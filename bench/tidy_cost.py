"""What computing the tidy proposals costs (app/services/tidy.py's compute_proposals), on a
database a benchmark loaded: each tenant's live memories read a page at a time for their
nearest neighbours, then the stale ones; twice, the second finding nothing new.

    BENCH_DATA_DIR=/work/bench-data/lat .venv/bin/python -m bench.tidy_cost \
        --database agent_memory_bench_latency
"""

from __future__ import annotations

import argparse
import asyncio

import asyncpg

from app.config import Settings
from app.services.tidy import compute_proposals
from app.startup import open_runtime
from bench.support import fresh_database


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="agent_memory_bench_latency")
    args = parser.parse_args()
    async with fresh_database(args.database, reuse=True) as url:
        conn = await asyncpg.connect(url)
        tenants = await conn.fetch(
            "SELECT tenant_id, count(*) AS n FROM memories GROUP BY tenant_id ORDER BY n DESC"
        )
        await conn.close()
        async with open_runtime(Settings(), database_url=url) as runtime:
            for row in tenants:
                for run in ("first", "again"):
                    done = await compute_proposals(runtime, row["tenant_id"])
                    print(
                        f"tenant {row['tenant_id']} ({row['n']} memories), {run}:"
                        f" {done.seconds:.1f} s, found {done.found}, saved {done.saved}"
                    )


if __name__ == "__main__":
    asyncio.run(main())
