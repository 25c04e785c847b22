"""The real Claude Code CLI connects to /mcp over HTTP with OAuth, its browser step played
by the test: `claude mcp login --no-browser` in a pseudo-terminal (it wants one to take a
pasted redirect) prints the authorization URL and listens on a localhost port; the test
signs in to the consent page with a person's key, approves, and follows the redirect to
that port, as a browser would. Claude Code registers by its Client ID Metadata Document:
its usual one (claude.ai) is out of reach offline, so MCP_OAUTH_CLIENT_METADATA_URL points
it at the same document served here over https, with the same portless loopback redirect
URIs. Then a `claude -p` run (against a stub model) calls `remember` with the token."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.config import Settings
from app.embeddings.base import Embedder
from app.main import create_app
from app.services.keys import KeyService
from tests.conftest import EMPTY_TABLES, on_loopback, running, serving
from tests.helpers.agent_clients import CLAUDE
from tests.helpers.model_stubs import StubModel
from tests.oauth_flow import consent_page, decide, localhost_certificate

AUTHORIZATION_URL = re.compile(r"(https?://[^\s\x1b\x07]+/authorize\?[^\s\x1b\x07]+)")
PASTE_PROMPT = b"paste the redirect URL"


@pytest.fixture
async def base(
    settings: Settings, embedder: Embedder, database_url: str, db: asyncpg.Connection
) -> AsyncIterator[str]:
    """The service as a client's developer runs it: client documents from localhost."""
    local = settings.model_copy(update={"oauth_local_client_documents": True})
    application: FastAPI = create_app(local, embedder=embedder, database_url=database_url)
    async with running(application), serving(application) as url:
        yield url
    await db.execute(EMPTY_TABLES)


@asynccontextmanager
async def claude_code_document(tmp_path: Path) -> AsyncIterator[str]:
    """Claude Code's metadata document (as claude.ai serves it: portless loopback redirect
    URIs, no secret), over https on localhost; its URL."""
    _, certificate, key = localhost_certificate(tmp_path)
    served: dict[str, Any] = {}

    async def document(request: Request) -> JSONResponse:
        return JSONResponse(served["document"])

    app = Starlette(routes=[Route("/oauth/claude-code-client-metadata", document)])

    def config(port: int) -> uvicorn.Config:
        return uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_config=None,
                              ssl_certfile=str(certificate), ssl_keyfile=str(key))  # fmt: skip

    async with on_loopback(config) as port:
        url = f"https://localhost:{port}/oauth/claude-code-client-metadata"
        served["document"] = {
            "client_id": url, "client_name": "Claude Code",
            "redirect_uris": ["http://localhost/callback", "http://127.0.0.1/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"], "token_endpoint_auth_method": "none",
        }  # fmt: skip
        yield url


async def claude(home: Path, env: dict[str, str], *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        str(CLAUDE), *args, env=env, cwd=home,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, (out + err).decode()
    return out.decode()


class Terminal:
    """A process in a pseudo-terminal: what it printed so far, and lines typed into it."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self._master, slave = pty.openpty()
        self._argv, self._env, self._cwd, self._slave = argv, env, cwd, slave
        self.printed = b""

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self._argv, env=self._env, cwd=self._cwd,
            stdin=self._slave, stdout=self._slave, stderr=self._slave,
        )  # fmt: skip
        os.close(self._slave)

    async def until(self, wanted: bytes) -> bytes:
        """Read until `wanted` was printed (or the process ended: the caller asserts)."""
        loop = asyncio.get_running_loop()
        while wanted not in self.printed:
            try:
                chunk = await loop.run_in_executor(None, os.read, self._master, 65536)
            except OSError:  # the process ended and closed its side
                break
            if not chunk:
                break
            self.printed += chunk
        return self.printed

    async def end(self) -> int:
        code = await asyncio.wait_for(self.process.wait(), 120)
        await self.until(b"\x00never")  # what it printed last
        with suppress(OSError):
            os.close(self._master)
        return code


@pytest.mark.skipif(
    not CLAUDE.exists(), reason="no Claude Code CLI: ./scripts/claude-code installs it"
)
async def test_claude_code_logs_in_over_oauth_and_calls_a_tool(
    base: str, db: asyncpg.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ada = await KeyService.on_connection(db).create("team", "Ada laptop", "admin", person="Ada")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))  # the server's fetch
    async with claude_code_document(tmp_path) as document_url:
        env = {
            "PATH": os.environ["PATH"], "HOME": str(home), "TERM": "xterm",
            "DISABLE_AUTOUPDATER": "1", "MCP_OAUTH_CLIENT_METADATA_URL": document_url,
        }  # fmt: skip
        await claude(home, env, "mcp", "add", "--transport", "http", "-s", "user", "memory",
                     f"{base}/mcp")  # fmt: skip
        login = Terminal([str(CLAUDE), "mcp", "login", "memory", "--no-browser"], env, home)
        await login.start()
        printed = await login.until(PASTE_PROMPT)
        found = AUTHORIZATION_URL.search(printed.decode(errors="replace"))
        assert found, printed.decode(errors="replace")
        url = found.group(1)
        assert f"client_id={document_url.replace(':', '%3A').replace('/', '%2F')}" in url
        # The browser's part: sign in, approve, follow the redirect to Claude Code's port.
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            page = await consent_page(http, ada.key, url)
            shown = await http.get(page)
            assert "Claude Code" in shown.text and "described by a document" in shown.text
            decided = await decide(http, page, "approve", "agent")
            callback = decided.headers["location"]
            assert callback.startswith("http://localhost:"), callback
            delivered = await http.get(callback)
        assert delivered.status_code < 400, delivered.text
        assert await login.end() == 0, login.printed.decode(errors="replace")

        listed = await claude(home, env, "mcp", "list")
        assert re.search(r"memory: .*/mcp \(HTTP\) - . Connected", listed), listed

        stub = StubModel()
        stub.tool_calls = [("mcp__memory__remember",
                            {"text": "Claude Code reached memory over OAuth",
                             "source_repo": "acme/api"})]  # fmt: skip
        async with serving(stub.app()) as model_url:
            run = {**env, "ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "stub"}
            await claude(home, run, "-p", "Remember this", "--allowedTools",
                         "mcp__memory__remember")  # fmt: skip
    grant = await db.fetchrow("SELECT id, client_id, person_id, role FROM oauth_grants")
    assert (grant["client_id"], grant["person_id"], grant["role"]) == (
        document_url, ada.record.person_id, "agent",
    )  # fmt: skip
    memory = await db.fetchrow(
        "SELECT created_by_key, person_id FROM memories WHERE content LIKE 'Claude Code reached%'"
    )
    assert memory is not None, json.dumps(stub.requests[-1])[:2000]
    assert (memory["created_by_key"], memory["person_id"]) == (grant["id"], ada.record.person_id)
