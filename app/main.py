"""The FastAPI application: wiring only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app import __version__
from app.api import (
    audit,
    docs,
    health,
    keys,
    learning,
    lifecycle,
    memories,
    metrics,
    search,
    sessions,
    transfer,
)
from app.api.body_limit import BodyLimitMiddleware
from app.api.deps import get_principal
from app.api.errors import PROBLEM_RESPONSES, app_error_response, install_error_handlers
from app.api.idempotency import IdempotencyMiddleware
from app.api.options import OptionsMiddleware
from app.config import Settings, get_settings, tenant_connection_share
from app.console import routes as console
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
from app.domain.errors import AppError
from app.domain.memory import DEFAULT_TENANT
from app.embeddings.base import Embedder
from app.embeddings.factory import build_embedder
from app.mcp.server import build_mcp_server, current_principal
from app.repository.keys import KeyRepository
from app.runtime import Runtime
from app.services.auth import (
    Authenticator,
    FailedAuthLimiter,
    RateLimiter,
    decide_open_mode,
)
from app.services.backfill import backfill_embeddings
from app.services.sessions import prune_quietly
from app.telemetry import Telemetry
from app.views import Problem

logger = logging.getLogger("agent_memory")


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


async def prune_periodically(runtime: Runtime) -> None:
    """Forgetting on a timer (the advisory lock keeps several servers from overlapping),
    and embeddings for memories stored while the provider was down."""
    while True:
        await asyncio.sleep(runtime.settings.prune_interval_s)
        try:
            async with runtime.database.connection() as conn:
                tenants = {DEFAULT_TENANT, *await KeyRepository(conn).tenants()}
        except Exception:
            logger.warning("scheduled pruning could not list tenants", exc_info=True)
            continue
        for tenant_id in sorted(tenants):
            await prune_quietly(runtime, tenant_id, None)
            try:
                await backfill_embeddings(runtime, tenant_id)
            except Exception:
                logger.warning("scheduled embedding backfill failed", exc_info=True)


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
            settings.db_app_role or None,
        )
        database = Database(pool, settings.db_acquire_timeout_s, tenant_connection_share(settings))
        the_embedder = embedder or build_embedder(settings)
        try:
            database.embedding_model = the_embedder.name
            async with database.connection() as conn:
                if await on_citus(conn):
                    database.distributed = True
                    # The workers' sessions are Citus's own: each transaction carries these.
                    database.transaction_settings = search_settings(settings.hnsw_ef_search)
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
            yield Runtime(settings, database, the_embedder, Telemetry(), head, authenticator)
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


class AuthenticatedMcp:
    """/mcp takes the same keys as REST: the tools run for the key's tenant and role.
    (An ASGI class, so the router hands it the raw scope.)"""

    def __init__(self, mcp_asgi: StreamableHTTPASGIApp) -> None:
        self._mcp = mcp_asgi

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        try:
            principal = await get_principal(request, request.app.state.runtime)
        except AppError as exc:
            response = await app_error_response(request, exc)
            await response(scope, receive, send)
            return
        token = current_principal.set(principal)
        try:
            await self._mcp(scope, receive, send)
        finally:
            current_principal.reset(token)


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
        responses=PROBLEM_RESPONSES,
        docs_url=None,  # served from packaged assets instead of a CDN (app/api/docs.py)
        redoc_url=None,
    )
    # The problem schema the error responses refer to.
    original_openapi = app.openapi

    def openapi_with_problem() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = original_openapi()
            schema.setdefault("components", {}).setdefault("schemas", {})["Problem"] = (
                Problem.model_json_schema(ref_template="#/components/schemas/{model}")
            )
        return app.openapi_schema or original_openapi()

    app.openapi = openapi_with_problem  # type: ignore[method-assign]
    install_error_handlers(app)
    # MCP over streamable HTTP at /mcp, in this app, calling the same services.
    mcp_server = build_mcp_server(lambda: app.state.runtime)
    mcp_server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host=settings.host
    )
    mcp_asgi = StreamableHTTPASGIApp(mcp_server.session_manager)
    app.router.routes.append(
        Route("/mcp", AuthenticatedMcp(mcp_asgi), methods=["GET", "POST", "DELETE"])
    )
    app.add_middleware(OptionsMiddleware)
    app.add_middleware(IdempotencyMiddleware)
    # Outermost but for metrics: no other middleware reads a body past the limit.
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.max_body_bytes,
        streamed=frozenset({"/memories/import"}),
    )
    app.add_middleware(metrics.MetricsMiddleware)
    app.mount(docs.ASSETS_URL, docs.assets(), name="docs-assets")
    app.mount(console.STATIC_URL, console.static_files(), name="console-static")
    app.include_router(console.router)
    doors = (
        health,
        memories,
        transfer,
        search,
        learning,
        lifecycle,
        sessions,
        keys,
        audit,
        metrics,
    )
    for module in (docs, *doors):
        app.include_router(module.router)
    return app
