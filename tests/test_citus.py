"""The schema on a Citus cluster (a coordinator and two workers on loopback): the
migrations distribute the tenant tables by tenant_id and take it back, and a tenant-scoped
statement runs as one task on one worker.

Runs against CITUS_DATABASE_URL when set; else, in CI or with AGENT_MEMORY_CITUS=1 and the
Citus source at ../shared/vendor/, on a cluster that scripts/citus builds (cached) and
starts for this session; else it is skipped and says how to run it."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from app.db.migrations import downgrade, upgrade_head
from app.repository.rows import MEMORY_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
VENDORED = sorted((ROOT.parent / "shared" / "vendor").glob("citus-*.tar.gz"))
CLUSTER = {"CITUS_DATA": "/tmp/agent-memory-citus-tests", "CITUS_PORT": "9750"}
DISTRIBUTED = {
    "api_keys": "n",  # a reference table: on every node
    "idempotency_keys": "h",
    "memories": "h",
    "sessions": "h",
}


def citus(*args: str) -> str:
    env = {**os.environ, **CLUSTER}
    done = subprocess.run(
        [str(ROOT / "scripts" / "citus"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def citus_url() -> Iterator[str]:
    if url := os.environ.get("CITUS_DATABASE_URL"):
        yield url
        return
    wanted = os.environ.get("CI") == "true" or os.environ.get("AGENT_MEMORY_CITUS") == "1"
    if not VENDORED or not wanted:
        pytest.skip(
            "no Citus cluster: ./scripts/citus start, then CITUS_DATABASE_URL=$(./scripts/citus"
            " url); or AGENT_MEMORY_CITUS=1 with the source at ../shared/vendor/"
        )
    shutil.rmtree(CLUSTER["CITUS_DATA"], ignore_errors=True)
    citus("start", "2")
    try:
        yield citus("url")
    finally:
        citus("stop")
        shutil.rmtree(CLUSTER["CITUS_DATA"], ignore_errors=True)


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
