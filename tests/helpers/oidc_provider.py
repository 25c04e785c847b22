"""The certified OpenID provider `oidc-provider` from npm (installed by scripts/oidc-provider),
run by node on a loopback port (tests/oidc/provider.mjs) with one client and its accounts;
the server's settings that sign in through it; a person's key."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest
from pydantic import SecretStr

from app.config import Settings
from app.services.keys import KeyService

ROOT = Path(__file__).resolve().parents[2]
PROVIDER_SCRIPT = ROOT / "tests" / "oidc" / "provider.mjs"
CLIENT_ID = "agent-memory-console"
CLIENT_SECRET = "a-secret-the-provider-and-the-server-share"
ACCOUNTS = {
    "ada": {"email": "ada@example.com", "email_verified": True},
    "eve": {"email": "eve@example.com", "email_verified": False},
    "stranger": {"email": "stranger@example.com", "email_verified": True},
}


def provider_cache() -> str:
    found = subprocess.run(
        [ROOT / "scripts" / "oidc-provider"], capture_output=True, text=True, check=False
    )
    if found.returncode != 0:
        pytest.skip(found.stderr.strip() or "oidc-provider could not be installed")
    return found.stdout.strip()


@asynccontextmanager
async def provider(redirect_uri: str, port: int, host: str = "localhost") -> AsyncIterator[str]:
    """The provider on this loopback port, its one client sent back to `redirect_uri`,
    until the block ends: its issuer URL."""
    config = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "redirect_uri": redirect_uri,
        "host": host,
        "accounts": ACCOUNTS,
    }
    process = await asyncio.create_subprocess_exec(
        "node", str(PROVIDER_SCRIPT), provider_cache(), str(port),
        json.dumps(config), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        assert line.strip() == b"listening", (line, await process.stderr.read())
        yield f"http://{host}:{port}"
    finally:
        process.terminate()
        await process.wait()


def oidc_settings(settings: Settings, issuer: str) -> Settings:
    return settings.model_copy(
        update={
            "oidc_issuer": issuer,
            "oidc_client_id": CLIENT_ID,
            "oidc_client_secret": SecretStr(CLIENT_SECRET),
            "oidc_provider_name": "Acme SSO",
            "oidc_tenant": "team",
        }
    )


async def person_with_key(db: asyncpg.Connection, person: str, role: str) -> UUID:
    """A key of `role` for the person (made on first use); its id."""
    made = await KeyService.on_connection(db).create("team", f"{person} {role}", role, person)
    return made.record.id
