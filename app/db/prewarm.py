"""Whether PostgreSQL is still reading back, after a start, what its buffers held before it.

pg_prewarm's autoprewarm (in shared_preload_libraries: app/db/embedded.py) writes down the
buffers' blocks every few minutes and at shutdown; after a start its leader hands them to
a worker per database, which reads them back. Until it is done, a search reads the HNSW
graphs' pages from disk, and a small repository's slowest searches took several times the
whole tenant's (docs/benchmarks.md, "A repository's search at a million, each run the
first after a start"). The worker is
the one sign SQL shows (the leader has no database connection, so no row in
pg_stat_activity); a login sees it only as a superuser or with pg_read_all_stats.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg

from app.db.pool import on_citus
from app.db.unit_of_work import CONNECTION_ERRORS

logger = logging.getLogger("agent_memory.health")

# Seconds after the postmaster's start within which the leader starts its worker: a
# server up longer with no worker running has nothing (left) to read back.
WORKER_START_S = 5.0
# How often the wait looks again.
PREWARM_POLL_S = 0.2

_STATE = """
SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autoprewarm worker')
           AS reading,
       extract(epoch FROM now() - pg_postmaster_start_time())::float8 AS up_s,
       current_setting('pg_prewarm.autoprewarm', true) IS NOT DISTINCT FROM 'on' AS autoprewarm,
       pg_has_role('pg_read_all_stats', 'USAGE') AS sees_workers,
       -- The blocks written down at the last shutdown or interval; none: nothing to read.
       CASE WHEN pg_has_role('pg_read_server_files', 'USAGE')
            THEN (SELECT size FROM pg_stat_file('autoprewarm.blocks', true)) IS NOT NULL
       END AS dumped
"""
# On a Citus coordinator: each worker's own readers (its shards are read back there).
_WORKERS_READING = (
    "SELECT coalesce(sum(result::bigint), 0) FROM run_command_on_workers("
    "$$SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autoprewarm worker'$$)"
)


@dataclass(frozen=True, slots=True)
class PrewarmState:
    reading: int  # autoprewarm workers running now (on Citus, on every node)
    up_s: float  # seconds since the postmaster started
    autoprewarm: bool  # pg_prewarm's autoprewarm is loaded and on
    sees_workers: bool  # this login can see background workers in pg_stat_activity
    dumped: bool | None  # a list of blocks to read back exists (None: this login cannot tell)

    def nothing_to_wait_for(self) -> bool:
        """Nothing is being read back, or will be, or this login cannot tell."""
        if not self.autoprewarm or not self.sees_workers or self.dumped is False:
            return True
        return not self.reading and self.up_s > WORKER_START_S


async def prewarm_state(conn: asyncpg.Connection) -> PrewarmState:
    """One look, as the login `conn` is (the pool's before SET ROLE: the app role sees no
    background worker)."""
    row = await conn.fetchrow(_STATE)
    reading = int(row["reading"])
    if row["sees_workers"] and await on_citus(conn):
        reading += int(await conn.fetchval(_WORKERS_READING))
    return PrewarmState(
        reading, float(row["up_s"]), bool(row["autoprewarm"]), bool(row["sees_workers"]),
        row["dumped"],
    )  # fmt: skip


class Warmth:
    """Whether the database has read back what its buffers held before its start
    (app/db/prewarm.py), so that the first searches are not read from disk. Warm once it
    has, once there is nothing to read, or once the wait has run out (logged)."""

    def __init__(self) -> None:
        self._warm = asyncio.Event()
        self._looked = asyncio.Event()  # the first look is done (or failed)

    @property
    def warm(self) -> bool:
        return self._warm.is_set()

    async def until_warm(self) -> None:
        await self._warm.wait()

    async def first_look(self) -> None:
        """Until the watch has looked once: a start with nothing to read back is ready from
        its first request."""
        await self._looked.wait()

    async def watch(self, look: Callable[[], Awaitable[PrewarmState]], bound_s: float) -> None:
        """Look until autoprewarm is done (a worker seen reading and gone, or none started
        within its start), for at most `bound_s`; then warm, whatever it found."""
        started = time.monotonic()
        seen = False
        try:
            while True:
                state = await look()
                self._looked.set()
                seen = seen or state.reading > 0
                waited = time.monotonic() - started
                if (seen and not state.reading) or state.nothing_to_wait_for():
                    if seen:
                        logger.info("autoprewarm read the buffers back: ready after %.1f s", waited)
                    return
                if waited >= bound_s:
                    logger.warning(
                        "autoprewarm is still reading the buffers back after %.1f s"
                        " (PREWARM_WAIT_S): ready anyway; the first searches read from disk",
                        waited,
                    )
                    return
                await asyncio.sleep(PREWARM_POLL_S)
        except CONNECTION_ERRORS as exc:
            # The database's own answer is readiness's first question; this one is moot.
            logger.warning("could not tell whether autoprewarm is done (%s): not waiting", exc)
        finally:
            self._warm.set()
            self._looked.set()

    async def watch_database(self, dsn: str, bound_s: float) -> None:
        """The watch over one connection of the login `dsn` (the pool's, before SET ROLE),
        closed after."""
        conn: asyncpg.Connection | None = None

        async def look() -> PrewarmState:
            nonlocal conn
            conn = conn or await asyncpg.connect(dsn)
            return await prewarm_state(conn)

        try:
            await self.watch(look, bound_s)
        finally:
            if conn is not None:
                await conn.close()
