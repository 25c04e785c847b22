"""One transaction per request (or per MCP tool call), begun lazily, ended by the caller's scope.

Services never commit: the scope that opened the unit of work commits on success and
rolls back on any error, so a rejected request leaves nothing half-written.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

import asyncpg

from app.domain.errors import InvalidInputError, ServiceUnavailableError

# Errors that mean "the database is not there right now", as opposed to a bad statement.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    TimeoutError,
)


class Database:
    def __init__(self, pool: Any, acquire_timeout_s: float = 5.0) -> None:
        self.pool = pool
        self.acquire_timeout_s = acquire_timeout_s

    async def close(self) -> None:
        await asyncio.wait_for(self.pool.close(), timeout=10)


class UnitOfWork:
    """A connection and its transaction, acquired on first use so that slow work done
    before touching the database (embedding) holds no pool slot."""

    def __init__(self, database: Database, tenant_id: str, key_id: UUID | None = None) -> None:
        self._database = database
        self.tenant_id = tenant_id
        self.key_id = key_id  # provenance: the API key this work is done for
        self._conn: Any = None
        self._tx: Any = None

    async def connection(self) -> Any:
        if self._conn is None:
            try:
                conn = await self._database.pool.acquire(timeout=self._database.acquire_timeout_s)
            except CONNECTION_ERRORS as exc:
                raise ServiceUnavailableError("database unavailable") from exc
            try:
                tx = conn.transaction()
                await tx.start()
                # Row-level security's second wall: this transaction sees one tenant only.
                await conn.execute("SELECT set_config('app.tenant_id', $1, true)", self.tenant_id)
            except BaseException:
                await self._database.pool.release(conn)
                raise
            self._conn, self._tx = conn, tx
        return self._conn

    async def commit(self) -> None:
        if self._tx is not None:
            await self._tx.commit()

    async def rollback(self) -> None:
        if self._tx is not None:
            # If the connection is gone, the server has rolled back for us.
            with contextlib.suppress(*CONNECTION_ERRORS):
                await self._tx.rollback()

    async def release(self) -> None:
        if self._conn is not None:
            conn, self._conn, self._tx = self._conn, None, None
            await self._database.pool.release(conn)


@asynccontextmanager
async def unit_of_work(
    database: Database, tenant_id: str, key_id: UUID | None = None
) -> AsyncIterator[UnitOfWork]:
    uow = UnitOfWork(database, tenant_id, key_id)
    try:
        yield uow
    except CONNECTION_ERRORS as exc:
        await uow.rollback()
        raise ServiceUnavailableError("database unavailable") from exc
    except asyncpg.DataError as exc:
        # Input validation should have caught it; never a 500 for a bad value.
        await uow.rollback()
        raise InvalidInputError("a value is out of range or malformed") from exc
    except BaseException:
        await uow.rollback()
        raise
    else:
        try:
            await uow.commit()
        except CONNECTION_ERRORS as exc:
            raise ServiceUnavailableError("database unavailable during commit") from exc
    finally:
        await uow.release()
