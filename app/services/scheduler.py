"""The service's own schedule: forgetting on a timer, tidy proposals for a person,
embeddings for memories stored while the provider was down, and large repositories' own
graphs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from app.domain.memory import DEFAULT_TENANT
from app.repository.keys import KeyRepository
from app.runtime import Runtime
from app.services.backfill import backfill_embeddings
from app.services.graphs import keep_graphs_quietly
from app.services.oauth import forget_expired_quietly
from app.services.sessions import prune_quietly
from app.services.tidy import compute_quietly

logger = logging.getLogger("agent_memory")


async def prune_periodically(runtime: Runtime) -> None:
    """Forgetting on a timer (the advisory lock keeps several servers from overlapping),
    embeddings for memories stored while the provider was down, and repositories' graphs."""
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
            await compute_quietly(runtime, tenant_id)  # tidy proposals, never applied
            try:
                await backfill_embeddings(runtime, tenant_id)
            except Exception:
                logger.warning("scheduled embedding backfill failed", exc_info=True)
        await keep_graphs_quietly(runtime.owner_url, runtime.settings.repository_graph_rows)
        await forget_expired_quietly(runtime)  # OAuth codes, tokens, requests, clients


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
