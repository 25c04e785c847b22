"""What a running service holds, built once at start: the database (embedded unless
configured), its pool, the embedder, the schema and model checks, and who may call."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from app.config import Settings, tenant_connection_share
from app.db.embedded import EmbeddedPostgres
from app.db.migrations import (
    current_revision,
    embedding_dimension,
    head_revision,
    recorded_embedding_model,
    stored_embedding_model,
)
from app.db.pool import create_pool, on_citus, search_settings
from app.db.unit_of_work import Database
from app.domain import times
from app.embeddings.base import Embedder
from app.embeddings.factory import build_embedder
from app.runtime import Runtime
from app.services.auth import (
    Authenticator,
    FailedAuthLimiter,
    RateLimiter,
    decide_open_mode,
)
from app.services.oidc import identity_provider
from app.services.search import connection_warm_up
from app.telemetry import Telemetry


class StartupError(RuntimeError):
    """The service cannot start as configured; the message says what to change."""


async def check_schema(database: Database, embedder: Embedder, head: str) -> None:
    async with database.connection() as conn:
        revision = await current_revision(conn)
        if revision != head:
            raise StartupError(
                f"database schema is at {revision or 'nothing'}, expected {head}: "
                "run `agent-memory migrate` (or `alembic upgrade head`)"
            )
        dim = await embedding_dimension(conn)
        recorded: str | None
        if dim == embedder.dim:
            recorded = await recorded_embedding_model(conn, embedder.name)
            if recorded != embedder.name:
                raise StartupError(
                    f"the stored vectors were made by {recorded} but this server is configured"
                    f" for {embedder.name}: vectors of two models do not compare. Set"
                    " EMBEDDING_MODEL back, start on a new database, or re-embed"
                    " (agent-memory reembed)"
                )
        else:
            recorded = await stored_embedding_model(conn)
    if dim != embedder.dim:
        made_by = f" made by {recorded}" if recorded else ""
        raise StartupError(
            f"the database stores {dim}-dimensional embeddings{made_by} but the"
            f" {embedder.name} provider produces {embedder.dim}: use a provider of dimension"
            f" {dim}, a new database created with EMBEDDING_DIM={embedder.dim}, or re-embed"
            " (agent-memory reembed)"
        )


def resolve_database_url(settings: Settings) -> tuple[str, EmbeddedPostgres | None]:
    if settings.database_url:
        return settings.database_url, None
    embedded = EmbeddedPostgres(settings.data_dir)
    return embedded.start(), embedded


@asynccontextmanager
async def open_runtime(
    settings: Settings, embedder: Embedder | None = None, database_url: str | None = None
) -> AsyncIterator[Runtime]:
    """Database (embedded unless configured), pool, embedder, schema check: what a running
    service holds, whether it speaks HTTP or MCP over stdio."""
    embedded = None
    url = database_url
    if url is None:
        url, embedded = resolve_database_url(settings)
    try:
        the_embedder = embedder or build_embedder(settings)
        try:
            # Each new connection runs the searches once before its first request.
            pool = await create_pool(
                url,
                settings.db_pool_min,
                settings.db_pool_max,
                settings.db_command_timeout_s,
                settings.hnsw_ef_search,
                settings.db_app_role or None,
                settings.vector_exact_factor,
                warm_up=connection_warm_up(settings, the_embedder.name, the_embedder.dim),
            )
        except BaseException:
            if embedder is None:
                await the_embedder.aclose()
            raise
        database = Database(pool, settings.db_acquire_timeout_s, tenant_connection_share(settings))
        # The time filter's parser loads its language data here, not in a request.
        await asyncio.to_thread(times.warm_up)
        try:
            database.embedding_model = the_embedder.name
            async with database.connection() as conn:
                if await on_citus(conn):
                    database.distributed = True
                    # The workers' sessions are Citus's own: each transaction carries these.
                    database.transaction_settings = search_settings(
                        settings.hnsw_ef_search, settings.vector_exact_factor
                    )
            head = head_revision()
            await check_schema(database, the_embedder, head)
            authenticator = Authenticator(
                database,
                RateLimiter(settings.rate_limit_per_minute),
                FailedAuthLimiter(settings.auth_max_failures, settings.auth_failure_window_s),
                await decide_open_mode(
                    database, settings.host, settings.require_keys, settings.allow_open_network
                ),
            )
            runtime = Runtime(
                settings, database, the_embedder, Telemetry(), head, authenticator,
                owner_url=url if settings.db_app_role else None,
                identity_provider=identity_provider(settings),
            )  # fmt: skip
            watching = asyncio.create_task(
                runtime.warmth.watch_database(url, settings.prewarm_wait_s)
            )
            try:
                await runtime.warmth.first_look()
                yield runtime
            finally:
                watching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watching
        finally:
            await database.close()
            if embedder is None:
                await the_embedder.aclose()
    finally:
        if embedded is not None:
            embedded.stop()
