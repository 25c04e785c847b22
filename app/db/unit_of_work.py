"""One transaction per request (or per MCP tool call), begun lazily, ended by the caller's scope.

Services never commit: the scope that opened the unit of work commits on success and
rolls back on any error, so a rejected request leaves nothing half-written.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

import asyncpg

from app.concurrency import TenantShares
from app.domain.errors import InvalidInputError, OverloadedError, ServiceUnavailableError

# Errors that mean "the database is not there right now", as opposed to a bad statement.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    # The server ended the session mid-statement and the client's protocol state is
    # corrupt (MagicStack/asyncpg#784): the connection is as good as gone.
    asyncpg.InternalClientError,
    TimeoutError,
)


class Database:
    def __init__(
        self,
        pool: Any,
        acquire_timeout_s: float = 5.0,
        tenant_share: int | None = None,
        transaction_settings: Mapping[str, str] | None = None,
    ) -> None:
        self.pool = pool
        self.acquire_timeout_s = acquire_timeout_s
        self.shares = TenantShares(tenant_share) if tenant_share else None
        # Set at the start of every transaction, with the tenant: on Citus the session's
        # own settings never reach the workers, a transaction's SET LOCAL does.
        self.transaction_settings = dict(transaction_settings or {})
        # On a Citus coordinator: statements must be ones it can send whole to one worker.
        self.distributed = False
        # The model this process's vectors come from: a write or a search of vectors asks
        # the database whether it is still the recorded one (see migration 0019).
        self.embedding_model: str | None = None

    async def acquire(self) -> Any:
        """A pooled connection, or 503 when none frees up within the acquire timeout."""
        try:
            return await self.pool.acquire(timeout=self.acquire_timeout_s)
        except CONNECTION_ERRORS as exc:
            raise ServiceUnavailableError("database unavailable") from exc

    async def acquire_for(self, tenant_id: str) -> Any:
        """A connection counted against the tenant's share (release it with release_for)."""
        if self.shares is None:
            return await self.acquire()
        if not await self.shares.acquire(tenant_id, self.acquire_timeout_s):
            raise OverloadedError(
                f"this tenant already uses its {self.shares.per_tenant} database connections;"
                " retry shortly",
                retry_after_s=1,
            )
        try:
            return await self.acquire()
        except BaseException:
            self.shares.release(tenant_id)
            raise

    async def release_for(self, tenant_id: str, conn: Any, *, lost: bool = False) -> None:
        try:
            await self.release(conn, lost=lost)
        finally:
            if self.shares is not None:
                self.shares.release(tenant_id)

    async def release(self, conn: Any, *, lost: bool = False) -> None:
        """Back to the pool; a connection that failed as lost is closed first, so the pool
        replaces it instead of handing it to the next request in a corrupt state."""
        try:
            if lost and not conn.is_closed():
                conn.terminate()
            await self.pool.release(conn)
        except CONNECTION_ERRORS:
            # The connection died on the way back (its close may already have returned it
            # to the pool); the pool opens a new one. The work had ended either way.
            pass

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        """A connection outside any tenant's transaction (key lookups, schema checks)."""
        conn = await self.acquire()
        lost = False
        try:
            yield conn
        except CONNECTION_ERRORS as exc:
            lost = True
            raise ServiceUnavailableError("database unavailable") from exc
        finally:
            await self.release(conn, lost=lost)

    async def close(self) -> None:
        await asyncio.wait_for(self.pool.close(), timeout=10)


class UnitOfWork:
    """A connection and its transaction, acquired on first use so that slow work done
    before touching the database (a search's query embedding) holds no pool slot."""

    def __init__(
        self,
        database: Database,
        tenant_id: str,
        key_id: UUID | None = None,
        person_id: UUID | None = None,
        every_person: bool = False,
    ) -> None:
        self._database = database
        self.tenant_id = tenant_id
        self.key_id = key_id  # provenance: the API key this work is done for
        self.person_id = person_id  # and the person it acts for
        # Row security's third wall (migration 0045): a personal row reaches its person's
        # transactions only; the service's own work (pruning, embedding) reaches everyone's.
        self._reach = {
            "app.person_id": str(person_id or ""),
            "app.every_person": "on" if every_person else "off",
        }
        self.distributed = database.distributed
        self.embedding_model = database.embedding_model
        self._conn: Any = None
        self._open = False  # a transaction of this unit is under way on _conn
        self._lost = False
        # The transaction-local parameters callers asked for in this transaction.
        self._local: dict[str, str] = {}

    async def connection(self, settings: Mapping[str, str] | None = None) -> Any:
        """The transaction's connection. `settings` are transaction-local parameters the
        caller's next statement needs; they are set in the same round trip as the tenant
        when this call begins the transaction, and later only if not already so."""
        local = {k: v for k, v in (settings or {}).items() if self._local.get(k) != v}
        if self._conn is None:
            conn = await self._database.acquire_for(self.tenant_id)
            try:
                # Row-level security's second wall: this transaction sees one tenant only.
                # BEGIN and the settings in one round trip, not asyncpg's transaction object,
                # which sends BEGIN alone: a round trip less for every transaction
                # (docs/benchmarks.md, issue 69). (asyncpg then refuses
                # conn.transaction() on this connection: no savepoint is taken inside.)
                settings = self._database.transaction_settings
                await conn.execute(
                    "BEGIN; "
                    + settings_sql({**settings, "app.tenant_id": self.tenant_id, **self._reach,
                                    **local})
                )  # fmt: skip
            except CONNECTION_ERRORS as exc:
                await self._database.release_for(self.tenant_id, conn, lost=True)
                raise ServiceUnavailableError("database unavailable") from exc
            except BaseException:
                with contextlib.suppress(Exception):  # the pool's reset rolls back otherwise
                    if conn.is_in_transaction():
                        await conn.execute("ROLLBACK")
                await self._database.release_for(self.tenant_id, conn)
                raise
            self._conn, self._open = conn, True
        elif local:
            await set_local(self._conn, local)
        self._local.update(local)
        return self._conn

    async def commit(self) -> None:
        if self._open:
            self._open = False
            await self._conn.execute("COMMIT")

    def connection_lost(self) -> None:
        self._lost = True

    async def rollback(self) -> None:
        if self._open and not self._lost:
            self._open = False
            try:
                await self._conn.execute("ROLLBACK")
            except CONNECTION_ERRORS:
                self._lost = True  # the server has rolled back for us

    async def release_if_unwritten(self) -> bool:
        """Before slow work (embedding) that should not hold a pool slot: if this
        transaction has written nothing yet (no transaction id assigned), end it and give
        the connection back; the next statement begins a new transaction. A transaction
        that has written keeps its connection, so the caller's work stays atomic."""
        if self._conn is None:
            return True
        if self.distributed:
            # A write that Citus routed to a worker assigns no transaction id on the
            # coordinator, so nothing here tells a read from a write: keep the connection.
            return False
        if await self._conn.fetchval("SELECT pg_current_xact_id_if_assigned() IS NOT NULL"):
            return False
        await self.rollback()
        await self.release()
        return True

    async def release(self) -> None:
        if self._conn is not None:
            conn, self._conn, self._open = self._conn, None, False
            self._local = {}
            await self._database.release_for(self.tenant_id, conn, lost=self._lost)
            self._lost = False


# Citus's words for a statement planned against a shard (or a placement of one) that a
# split or a move replaced before the statement ran. For a write Citus checks this itself
# and answers a serialization failure; a read, the search's call among them, gets these
# (docs/scale-out.md, "A statement planned before a split or a move, run after it").
_REPLACED_SHARD = re.compile(r"could not find valid entry for shard (placement )?\d+")


def asks_for_a_retry(exc: asyncpg.PostgresError) -> bool:
    """Whether the database rolled the work back for a reason that trying it again as it
    was may not meet: a serialization failure or a deadlock; on Citus, also a statement
    that met its tenant's shard being split or moved (isolate-tenant)."""
    if isinstance(exc, asyncpg.TransactionRollbackError):
        return True
    return isinstance(exc, asyncpg.InternalServerError) and bool(
        _REPLACED_SHARD.fullmatch(str(exc))
    )


_SETTING_NAME = re.compile(r"[a-z_]+(\.[a-z_]+)?")


async def set_local(conn: Any, settings: Mapping[str, str]) -> None:
    """SET LOCAL statements in one round trip; they end with the transaction. SET LOCAL,
    not set_config(): it is the one form Citus forwards to the workers a transaction
    touches (with citus.propagate_set_commands = 'local'), where row-level security
    reads app.tenant_id. SET takes no bound parameters, so each value is a quoted literal."""
    await conn.execute(settings_sql(settings))


def settings_sql(settings: Mapping[str, str]) -> str:
    """The SET LOCAL statements of set_local(), as one string."""
    statements = []
    for name, value in settings.items():
        if not _SETTING_NAME.fullmatch(name):
            raise ValueError(f"not a setting name: {name!r}")
        statements.append(f"SET LOCAL {name} = {quote_literal(value)}")
    return "; ".join(statements)


def quote_literal(value: str) -> str:
    """A string constant for any value without a NUL (PostgreSQL refuses those anyway):
    E'' syntax, so its meaning does not hang on standard_conforming_strings."""
    if "\x00" in value:
        raise ValueError("a setting cannot hold a NUL character")
    return "E'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@asynccontextmanager
async def unit_of_work(
    database: Database,
    tenant_id: str,
    key_id: UUID | None = None,
    person_id: UUID | None = None,
    every_person: bool = False,
) -> AsyncIterator[UnitOfWork]:
    uow = UnitOfWork(database, tenant_id, key_id, person_id, every_person)
    try:
        yield uow
    except CONNECTION_ERRORS as exc:
        uow.connection_lost()
        raise ServiceUnavailableError("database unavailable") from exc
    except asyncpg.PostgresError as exc:
        await uow.rollback()
        if asks_for_a_retry(exc):
            raise ServiceUnavailableError(
                "the database asked for this to be retried; nothing was written", retry_after_s=1
            ) from exc
        if isinstance(exc, asyncpg.DataError):
            # Input validation should have caught it; never a 500 for a bad value.
            raise InvalidInputError("a value is out of range or malformed") from exc
        raise
    except BaseException:
        await uow.rollback()
        raise
    else:
        try:
            await uow.commit()
        except CONNECTION_ERRORS as exc:
            uow.connection_lost()
            raise ServiceUnavailableError("database unavailable during commit") from exc
    finally:
        await uow.release()
