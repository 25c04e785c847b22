"""The FastAPI application: wiring only (the runtime is app/startup.py's, the schedule
app/services/scheduler.py's, /mcp's authentication app/api/mcp_http.py's)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.routing import Route

from app import __version__
from app.api import (
    audit,
    docs,
    drafts,
    health,
    keys,
    learning,
    lifecycle,
    memories,
    metrics,
    people,
    recall,
    search,
    sessions,
    standing,
    tidy,
    transfer,
)
from app.api.body_limit import BodyLimitMiddleware
from app.api.errors import PROBLEM_RESPONSES, install_error_handlers
from app.api.idempotency import IdempotencyMiddleware
from app.api.mcp_http import AuthenticatedMcp
from app.api.oauth import oauth_routes
from app.api.options import OptionsMiddleware
from app.api.request_guard import RequestGuardMiddleware
from app.api.rules import as_served, published
from app.config import Settings, get_settings, limits_of, origins_of
from app.console.pages import STATIC_URL, static_files
from app.console.router import router as console_router
from app.domain.origins import allowed_hosts
from app.domain.problems import Problem
from app.embeddings.base import Embedder
from app.mcp.server import build_mcp_server
from app.services.auth import is_loopback
from app.services.client_documents import ClientDocuments
from app.services.scheduler import background_pruning
from app.startup import open_runtime

logger = logging.getLogger("agent_memory")


def create_app(
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    database_url: str | None = None,
) -> FastAPI:
    settings = settings or get_settings()
    mcp_server = build_mcp_server(lambda: app.state.runtime)

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
    _serve_openapi_as_enforced(app, settings)
    install_error_handlers(app)
    # MCP over streamable HTTP at /mcp, in this app, calling the same services.
    mcp_server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host=settings.host
    )
    mcp_asgi = StreamableHTTPASGIApp(mcp_server.session_manager)
    app.router.routes.append(
        Route("/mcp", AuthenticatedMcp(mcp_asgi), methods=["GET", "POST", "DELETE"])
    )
    # OAuth 2.1 for remote MCP clients (claude.ai, ChatGPT...): its metadata and endpoints.
    if not settings.public_url and not is_loopback(settings.host):
        logger.warning(
            "PUBLIC_URL is not set: OAuth clients are told this server is at the address each"
            " request reached; behind a TLS proxy set PUBLIC_URL=https://... (docs/connect/)"
        )
    documents = ClientDocuments(
        settings.oauth_local_client_documents, enabled=settings.oauth_client_documents
    )
    app.router.routes.extend(oauth_routes(documents))
    _add_middleware(app, settings)
    app.mount(docs.ASSETS_URL, docs.assets(), name="docs-assets")
    app.mount(STATIC_URL, static_files(), name="console-static")
    app.include_router(console_router)
    for module in (docs, *DOORS):
        app.include_router(module.router)
    return app


DOORS = (health, memories, transfer, search, learning, recall, lifecycle, sessions, standing,
         drafts, tidy, people, keys, audit, metrics)  # fmt: skip


def _serve_openapi_as_enforced(app: FastAPI, settings: Settings) -> None:
    """The OpenAPI document with the problem schema the error responses refer to, and each
    configured limit at this server's value: in full at /openapi.full.json (every rule a
    JSON Schema keyword, for contract testers), and at /openapi.json (and /docs) with the
    long text pattern named in words (app/api/rules.py, `published`)."""
    original_openapi = app.openapi
    documents: dict[str, dict[str, Any]] = {}

    def full() -> dict[str, Any]:
        if "full" not in documents:
            schema = original_openapi()
            schema.setdefault("components", {}).setdefault("schemas", {})["Problem"] = (
                Problem.model_json_schema(ref_template="#/components/schemas/{model}")
            )
            documents["full"] = as_served(schema, limits_of(settings))
        return documents["full"]

    def readable() -> dict[str, Any]:
        if "published" not in documents:
            documents["published"] = published(full())
        return documents["published"]

    async def full_document() -> JSONResponse:
        return JSONResponse(full())

    app.openapi = readable  # type: ignore[method-assign]
    app.add_api_route("/openapi.full.json", full_document, include_in_schema=False)


def _add_middleware(app: FastAPI, settings: Settings) -> None:
    """Added innermost first: the last one added sees a request first."""
    app.add_middleware(OptionsMiddleware)
    app.add_middleware(IdempotencyMiddleware)
    # Outermost but for metrics: no other middleware reads a body past the limit.
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.max_body_bytes,
        streamed=frozenset({"/memories/import"}),
    )
    # Before anything reads the body or the key: a rebinding page or a cross-site form
    # gets nothing but the refusal.
    app.add_middleware(
        RequestGuardMiddleware,
        allowed_hosts=allowed_hosts(settings.allowed_hosts, settings.host, settings.public_url),
        allowed_origins=origins_of(settings),
    )
    app.add_middleware(metrics.MetricsMiddleware)
