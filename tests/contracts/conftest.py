"""Keys of two tenants and every role, for the contracts that cross tenants."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest

from app.services.keys import KeyService


@pytest.fixture
async def keys(api: httpx.AsyncClient, db: asyncpg.Connection) -> AsyncIterator[dict[str, str]]:
    service = KeyService.on_connection(db)
    made = {}
    for tenant in ("a", "b"):
        for role in ("agent", "reader", "admin"):
            made[f"{tenant}-{role}"] = (await service.create(tenant, f"{tenant} {role}", role)).key
    yield made
    await db.execute("TRUNCATE api_keys CASCADE")
