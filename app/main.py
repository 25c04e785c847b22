"""The FastAPI application: wiring only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.routing import Route

from app import __version__
from app.api import health, learning, lifecycle, memories, metrics, search, sessions
from app.api.errors import install_error_handlers
from app.config import Settings, get_settings
from app.db.embedded import EmbeddedPostgres
from app.db.migrations import current_revision, embedding_dimension, head_revision
from app.db.pool import create_pool
from app.db.session import Database
from app.embeddings.base import Embedder
from app.embeddings.factory import build_embedder
from app.mcp.server import build_mcp_server
from app.runtime import Runtime
from app.services.sessions import prune_quietly
from app.services.telemetry import Telemetry

logger = logging.getLogger("agent_memory")


class StartupError(RuntimeError):
    """The service cannot start as configured; the message says what to change."""


async def check_schema(database: Database, embedder: Embedder, head: str) -> None:
    async with database.pool.acquire() as conn:
        revision = await current_revision(conn)
        if revision != head:
            raise StartupError(
                f"database schema is at {revision or 'nothing'}, expected {head}: "
                "run `agent-memory migrate` (or `alembic upgrade head`)"
            )
        dim = await embedding_dimension(conn)
    if dim != embedder.dim:
        raise StartupError(
            f"the database stores {dim}-dimensional embeddings but the {embedder.name} provider "
            f"produces {embedder.dim}: use a provider of dimension {dim}, or a new database "
            f"created with EMBEDDING_DIM={embedder.dim}"
        )


async def prune_periodically(runtime: Runtime) -> None:
    """Forgetting on a timer; the advisory lock keeps several servers from overlapping."""
    while True:
        await asyncio.sleep(runtime.settings.prune_interval_s)
        await prune_quietly(runtime.database, runtime.settings, runtime.telemetry, None)


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
        pool = await create_pool(
            url,
            settings.db_pool_min,
            settings.db_pool_max,
            settings.db_command_timeout_s,
            settings.hnsw_ef_search,
        )
        database = Database(pool)
        the_embedder = embedder or build_embedder(settings)
        try:
            head = head_revision()
            await check_schema(database, the_embedder, head)
            yield Runtime(settings, database, the_embedder, Telemetry(), head)
        finally:
            await database.close()
            if embedder is None:
                await the_embedder.aclose()
    finally:
        if embedded is not None:
            embedded.stop()


@asynccontextmanager
async def background_pruning(runtime: Runtime) -> AsyncIterator[None]:
    pruner = None
    if runtime.settings.prune_interval_s > 0:
        pruner = asyncio.create_task(prune_periodically(runtime))
    try:
        yield
    finally:
        if pruner is not None:
            pruner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pruner


def create_app(
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    database_url: str | None = None,
) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_runtime(settings, embedder, database_url) as runtime:
            app.state.runtime = runtime
            logger.info("agent-memory ready", extra={"embedder": runtime.embedder.name})
            async with background_pruning(runtime), mcp_server.session_manager.run():
                yield

    app = FastAPI(
        title="agent-memory",
        version=__version__,
        summary="Long-term memory for AI coding agents: hybrid search over PostgreSQL + pgvector.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    # MCP over streamable HTTP at /mcp, in this app, calling the same services.
    mcp_server = build_mcp_server(lambda: app.state.runtime)
    mcp_server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host=settings.host
    )
    app.router.routes.append(Route("/mcp", StreamableHTTPASGIApp(mcp_server.session_manager)))
    app.add_middleware(metrics.MetricsMiddleware)
    for module in (health, memories, search, learning, lifecycle, sessions, metrics):
        app.include_router(module.router)
    return app
