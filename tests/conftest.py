"""A real PostgreSQL for every test: TEST_DATABASE_URL, else testcontainers when a Docker
engine answers, else the embedded server (PostgreSQL 18 + pgvector from the wheel).

With --citus, the tests run on a Citus cluster instead (a coordinator and two workers on
loopback): CITUS_DATABASE_URL when set, else one that scripts/citus builds (cached) and
starts for the session from the source at ../shared/vendor/."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.applications import Starlette

from app.cli.memories import AGENT_SHELL_MARKERS
from app.config import Settings
from app.db.embedded import EmbeddedPostgres
from app.db.migrations import downgrade, upgrade_head, upgrade_head_async
from app.embeddings.base import Embedder
from app.embeddings.local import LocalOnnxEmbedder
from app.embeddings.model_files import local_model_path
from app.main import create_app

ROOT = Path(__file__).resolve().parents[1]
# The suite may itself run in an agent's shell (a developer's Claude Code): what that
# client marks its commands with would make every `agent-memory remember` the tests run
# an agent's (app/cli/memories.py run_by_an_agent).
for _marker in AGENT_SHELL_MARKERS:
    os.environ.pop(_marker, None)
CITUS_SOURCE = sorted((ROOT.parent / "shared" / "vendor").glob("citus-*.tar.gz"))
# Its own port and data directory: a developer's cluster (scripts/citus start) is left be.
CITUS_CLUSTER = {"CITUS_DATA": "/tmp/agent-memory-citus-tests", "CITUS_PORT": "9750"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--citus",
        action="store_true",
        help="run on a Citus cluster (CITUS_DATABASE_URL, or one scripts/citus starts)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("citus"):
        return
    skip = pytest.mark.skip(reason="a mechanism of one PostgreSQL; Citus does this its own way")
    for item in items:
        if item.get_closest_marker("single_node"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def distributed(request: pytest.FixtureRequest) -> bool:
    """Whether this run is on Citus (--citus)."""
    return bool(request.config.getoption("citus"))


def citus(*args: str) -> str:
    done = subprocess.run(
        [str(ROOT / "scripts" / "citus"), *args],
        env={**os.environ, **CITUS_CLUSTER},
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="session")
def citus_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A Citus coordinator's database, with the citus and vector extensions."""
    if not request.config.getoption("citus"):
        pytest.skip("a Citus test: runs with --citus")
    if url := os.environ.get("CITUS_DATABASE_URL"):
        yield url
        return
    if not CITUS_SOURCE:
        pytest.skip(
            "no Citus cluster: ./scripts/citus start, then CITUS_DATABASE_URL=$(./scripts/citus"
            " url); or the Citus source at ../shared/vendor/"
        )
    shutil.rmtree(CITUS_CLUSTER["CITUS_DATA"], ignore_errors=True)
    citus("start", "2")
    try:
        yield citus("url")
    finally:
        citus("stop")
        shutil.rmtree(CITUS_CLUSTER["CITUS_DATA"], ignore_errors=True)


def _docker_engine_answers() -> bool:
    """A Docker engine on the default socket answers its ping (the client alone is not enough)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1)
            sock.connect("/var/run/docker.sock")
            sock.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
            return b"OK" in sock.recv(1024)
    except OSError:
        return False


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A URL of a database we may create and drop databases on."""
    if url := os.environ.get("TEST_DATABASE_URL"):
        yield url
        return
    if os.environ.get("TEST_USE_DOCKER", "1") == "1" and _docker_engine_answers():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("pgvector/pgvector:pg17", driver=None) as container:
            yield container.get_connection_url()
        return
    embedded = EmbeddedPostgres(tmp_path_factory.mktemp("pg"))
    embedded.start()
    yield embedded.dsn()
    embedded.stop()


async def _recreate_database(server_url: str, name: str) -> str:
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return with_database(server_url, name)


def with_database(url: str, name: str) -> str:
    base, sep, query = url.partition("?")
    prefix = base.rsplit("/", 1)[0]
    return f"{prefix}/{name}{sep}{query}"


@pytest.fixture(scope="session")
async def database_url(request: pytest.FixtureRequest) -> str:
    """The test database, built with the real migrations."""
    if request.config.getoption("citus"):
        # A Citus database is not made with CREATE DATABASE alone (every node needs the
        # extension): the cluster's one is taken back to nothing and migrated again.
        url: str = request.getfixturevalue("citus_url")
        await asyncio.to_thread(downgrade, url, "base")
        await asyncio.to_thread(upgrade_head, url)
        return url
    url = await _recreate_database(request.getfixturevalue("server_url"), "agent_memory_test")
    await upgrade_head_async(url)
    return url


@pytest.fixture(scope="session")
async def scratch_database(server_url: str) -> AsyncIterator[Any]:
    """Factory for a fresh, empty database (for migration tests)."""

    async def make(name: str) -> str:
        return await _recreate_database(server_url, name)

    yield make


@pytest.fixture(scope="session")
def model_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quantized model is made here once per run, not in the user's own cache."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def embedder(model_cache_dir: Path) -> Embedder:
    """The default local embedder, on the same (dynamically quantized) model file."""
    return LocalOnnxEmbedder(local_model_path("dynamic", model_cache_dir))


@pytest.fixture(scope="session")
def settings(database_url: str) -> Settings:
    # A request waits for a pooled connection as long as a busy machine needs (a burst of
    # 60 searches on a loaded Citus cluster outwaited the default 5 s); the tests of the
    # wait itself set their own.
    return Settings(
        database_url=database_url, db_pool_min=1, db_pool_max=20, db_acquire_timeout_s=120
    )


@pytest.fixture(scope="session")
async def app(settings: Settings, embedder: Embedder, database_url: str) -> AsyncIterator[FastAPI]:
    application = create_app(settings, embedder=embedder, database_url=database_url)
    async with running(application):
        yield application


@asynccontextmanager
async def running(application: FastAPI) -> AsyncIterator[None]:
    """Run the app's lifespan in a task of its own: it holds anyio task groups (the MCP
    session manager) that must be left from the task that entered them."""
    started, stop = asyncio.Event(), asyncio.Event()

    async def lifespan() -> None:
        async with application.router.lifespan_context(application):
            started.set()
            await stop.wait()

    task = asyncio.create_task(lifespan())
    waiter = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        task.result()  # start-up failed: raise its error here
    try:
        yield
    finally:
        stop.set()
        await task


@pytest.fixture(scope="session")
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        yield http


@pytest.fixture(scope="session")
async def db(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A direct connection for arranging and inspecting rows behind the API."""
    from pgvector.asyncpg import register_vector

    conn = await asyncpg.connect(database_url)
    await register_vector(conn)
    yield conn
    await conn.close()


@pytest.fixture
async def another_model(db: asyncpg.Connection) -> AsyncIterator[None]:
    """For a test that runs a stand-in embedder on the shared test database: the record of
    which model made the stored vectors is cleared for it, and put back after it."""
    recorded = await db.fetchval("DELETE FROM embedding_model RETURNING name")
    yield
    await db.execute("DELETE FROM embedding_model")
    if recorded is not None:
        await db.execute("INSERT INTO embedding_model (name) VALUES ($1)", recorded)


# What a test through the API leaves behind, emptied after it.
EMPTY_TABLES = (
    "TRUNCATE memories, memory_access, sessions, api_keys, people, idempotency_keys, audit_log,"
    " drafts, proposals, oauth_tokens, oauth_codes, oauth_grants, oauth_requests, oauth_clients,"
    " console_sessions"
)


@pytest.fixture
async def api(
    client: httpx.AsyncClient, db: asyncpg.Connection
) -> AsyncIterator[httpx.AsyncClient]:
    """The HTTP client, with the tables emptied after the test."""
    yield client
    await db.execute(EMPTY_TABLES)


@asynccontextmanager
async def on_loopback(make_config: Callable[[int], uvicorn.Config]) -> AsyncIterator[int]:
    """A uvicorn server on a loopback port that listens before the block starts, so nothing
    waits for start-up: a connection made early queues until the server accepts it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        server = uvicorn.Server(make_config(port))
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            yield port
        finally:
            server.should_exit = True
            await task


@asynccontextmanager
async def serving(application: Starlette) -> AsyncIterator[str]:
    """An app whose lifespan already runs, on a real loopback port, until the block ends."""

    def config(port: int) -> uvicorn.Config:
        return uvicorn.Config(
            application, host="127.0.0.1", port=port, lifespan="off", log_config=None
        )

    async with on_loopback(config) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
async def served(app: FastAPI, db: asyncpg.Connection) -> AsyncIterator[str]:
    """The test app on a real loopback port."""
    async with serving(app) as base:
        yield base
    await db.execute(EMPTY_TABLES)


@pytest.fixture
def mcp_served(served: str) -> str:
    return served
