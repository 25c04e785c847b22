"""The schema on a Citus cluster (a coordinator and two workers on loopback): the
migrations distribute the tenant tables by tenant_id and take it back, and a tenant-scoped
statement runs as one task on one worker.

Runs with --citus (see conftest.py), as ./scripts/test does when the Citus source is at
../shared/vendor/; skipped otherwise."""

from __future__ import annotations

import asyncio

import asyncpg

from app.db.migrations import downgrade, upgrade_head
from app.repository.rows import MEMORY_COLUMNS

DISTRIBUTED = {
    "api_keys": "n",  # a reference table: on every node
    "idempotency_keys": "h",
    "memories": "h",
    "sessions": "h",
}


async def distribution(url: str) -> dict[str, str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT logicalrelid::text AS name, partmethod::text FROM pg_dist_partition"
        )
        colocated = await conn.fetchval(
            "SELECT count(DISTINCT colocationid) FROM pg_dist_partition WHERE partmethod = 'h'"
        )
    finally:
        await conn.close()
    assert colocated in (0, 1)  # every tenant table on the same shards
    return {r["name"]: r["partmethod"] for r in rows}


async def test_migrations_distribute_by_tenant_and_take_it_back(citus_url: str) -> None:
    await asyncio.to_thread(upgrade_head, citus_url)
    assert await distribution(citus_url) == DISTRIBUTED
    await asyncio.to_thread(downgrade, citus_url, "0016")
    assert await distribution(citus_url) == {}
    await asyncio.to_thread(upgrade_head, citus_url)
    assert await distribution(citus_url) == DISTRIBUTED


async def test_a_tenant_scoped_statement_runs_as_one_task_on_one_worker(
    citus_url: str,
) -> None:
    await asyncio.to_thread(upgrade_head, citus_url)
    conn = await asyncpg.connect(citus_url)
    try:
        async with conn.transaction():
            for tenant in ("t1", "t2", "t3"):
                await conn.execute("SELECT set_config('app.tenant_id', $1, true)", tenant)
                await conn.execute(
                    "INSERT INTO memories (tenant_id, content, content_hash)"
                    " VALUES ($1, 'routed by tenant', memory_content_hash('routed by tenant'))",
                    tenant,
                )
        by_id = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant_id = 't2' AND m.id = "
        plans = {
            "get": by_id + "gen_random_uuid()",
            "list": f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant_id = 't2'"
            " ORDER BY m.created_at DESC, m.id DESC LIMIT 50",
            "unscoped": "SELECT count(*) FROM memories",
        }
        tasks = {}
        for name, sql in plans.items():
            plan = "\n".join(r[0] for r in await conn.fetch("EXPLAIN " + sql))
            tasks[name] = next(
                int(line.split(":")[1]) for line in plan.splitlines() if "Task Count" in line
            )
    finally:
        await conn.execute("TRUNCATE memories")
        await conn.close()
    assert tasks["get"] == tasks["list"] == 1
    assert tasks["unscoped"] > 1  # the contrast: without the tenant, every shard
