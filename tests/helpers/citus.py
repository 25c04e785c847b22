"""What the tests on a Citus cluster share: one statement on a connection of its own, and
the service's data emptied between cases."""

from __future__ import annotations

import asyncpg


async def as_owner(url: str, sql: str) -> asyncpg.Record | None:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchrow(sql)
    finally:
        await conn.close()


async def reset_tables(url: str) -> None:
    await as_owner(url, "TRUNCATE memories, memory_access, sessions, idempotency_keys")
