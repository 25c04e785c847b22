"""The asyncpg pool: pgvector types registered on every connection, and each new connection
warmed up before its first use.

asyncpg closes a connection idle for 300 s, but never below the pool's minimum, and hands
out the connection released last first: after a pause, the next request gets the warm
connection it used before (measured, docs/benchmarks.md, issue 69). A new one is opened at
the start and when requests outgrow the open ones; the warm-up runs then."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from pgvector.asyncpg import register_vector


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def search_settings(ef_search: int, vector_exact_factor: float = 0.0) -> dict[str, str]:
    # Iterative index scans: a filtered HNSW search keeps scanning until it has enough
    # rows that pass the filter, instead of returning a short list. A scope small beside
    # the graph is searched exactly instead (app.vector_exact_factor: memory_vector_candidates).
    return {
        "hnsw.ef_search": str(int(ef_search)),
        "hnsw.iterative_scan": "relaxed_order",
        "app.vector_exact_factor": repr(float(vector_exact_factor)),
    }


# Whether this database is a Citus coordinator (the service's pool and the migrations ask).
CITUS_INSTALLED = "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'"


async def on_citus(conn: asyncpg.Connection) -> bool:
    """A Citus coordinator: the tables may be distributed and statements run on workers."""
    return bool(await conn.fetchval(CITUS_INSTALLED))


async def prepare_session(
    conn: asyncpg.Connection,
    ef_search: int,
    app_role: str | None = "agent_memory_app",
    vector_exact_factor: float = 0.0,
) -> bool:
    """What every pooled connection is set up with before its first use; whether the
    database is a Citus coordinator."""
    await register_vector(conn)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    settings = search_settings(ef_search, vector_exact_factor)
    await conn.execute("; ".join(f"SET {name} = {value}" for name, value in settings.items()))
    distributed = await on_citus(conn)
    if distributed:
        # A transaction's SET LOCAL reaches the workers it touches (app/db/unit_of_work.py).
        await conn.execute("SET citus.propagate_set_commands = 'local'")
    if app_role:
        # Not the owner, not a superuser: row-level security applies to every query.
        await conn.execute(f"SET ROLE {quote_ident(app_role)}")
    return distributed


# What a new pooled connection runs once its session is prepared, before its first use: the
# service's searches, so that its first costs what its next does (app/startup.py). Given
# the connection and whether the database is a Citus coordinator.
WarmUp = Callable[[asyncpg.Connection, bool], Awaitable[None]]


async def create_pool(
    dsn: str,
    min_size: int,
    max_size: int,
    command_timeout: float,
    ef_search: int = 100,
    app_role: str | None = "agent_memory_app",
    vector_exact_factor: float = 0.0,
    warm_up: WarmUp | None = None,
) -> Any:
    async def init(conn: asyncpg.Connection) -> None:
        distributed = await prepare_session(conn, ef_search, app_role, vector_exact_factor)
        if warm_up is not None:
            await warm_up(conn, distributed)

    async def reset(conn: asyncpg.Connection) -> None:
        """Runs when a connection goes back to the pool, after asyncpg has rolled back any
        open transaction. asyncpg's default reset sends RESET ALL, which would silently
        drop the HNSW settings above after a connection's first use. Nothing else needs
        resetting: the tenant is set per transaction, advisory locks are per transaction,
        and nothing LISTENs or keeps cursors open."""

    return await asyncpg.create_pool(
        dsn=dsn,
        min_size=min_size,
        max_size=max_size,
        command_timeout=command_timeout,
        init=init,
        reset=reset,
        server_settings={
            "application_name": "agent-memory",
        },
    )
