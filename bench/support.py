"""Shared by the benchmarks: a throwaway database (embedded unless DATABASE_URL is set)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import asyncpg
import httpx
import psutil
from prometheus_client.parser import text_string_to_metric_families

from app.db.embedded import EmbeddedPostgres
from app.db.migrations import upgrade_head_async
from app.db.pool import on_citus

ROOT = Path(__file__).resolve().parents[1]
# The embedded server behind each URL fresh_database() yielded, for restart_database().
_EMBEDDED: dict[str, EmbeddedPostgres] = {}


@contextlib.asynccontextmanager
async def fresh_database(name: str, reuse: bool = False) -> AsyncIterator[str]:
    """Create database `name` (dropping an old one unless `reuse`), migrate it, yield its URL.
    BENCH_DATABASE_URL instead names a database to use as it is, migrated but never created
    or dropped: a Citus coordinator's, whose extension a new database would lack."""
    given = os.environ.get("BENCH_DATABASE_URL")
    if given:
        await upgrade_head_async(given)
        yield given
        return
    embedded = None
    scratch_dir: Path | None = None
    server_url = os.environ.get("DATABASE_URL")
    if not server_url:
        kept_dir = os.environ.get("BENCH_DATA_DIR")
        if kept_dir:
            data_dir = Path(kept_dir)
        else:
            data_dir = scratch_dir = Path(tempfile.mkdtemp(prefix="am-bench-"))
        embedded = EmbeddedPostgres(data_dir)
        await asyncio.to_thread(embedded.start)
        server_url = embedded.dsn()
    conn = await asyncpg.connect(server_url)
    try:
        exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
        if exists and not reuse:
            await conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        if not exists or not reuse:
            await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    base, sep, query = server_url.partition("?")
    url = f"{base.rsplit('/', 1)[0]}/{name}{sep}{query}"
    await upgrade_head_async(url)
    if embedded is not None:
        _EMBEDDED[url] = embedded
    try:
        yield url
    finally:
        _EMBEDDED.pop(url, None)
        if embedded is not None:
            embedded.stop()
        # A throwaway cluster is a few hundred MB; only BENCH_DATA_DIR is kept between runs.
        if scratch_dir is not None:
            shutil.rmtree(scratch_dir, ignore_errors=True)


async def restart_database(url: str) -> float:
    """Stop and start the server behind `url`, a database fresh_database() yielded: its
    embedded server, or with BENCH_DATABASE_URL the local Citus cluster (scripts/citus,
    with this environment's CITUS_SHARED_BUFFERS). Each node's pg_prewarm reads back what
    its buffers held, as after any start, and this returns once it has; the connections
    the server held are gone. The seconds that took, after the start."""
    embedded = _EMBEDDED.get(url)
    if embedded is not None:
        await asyncio.to_thread(embedded.restart)
    elif os.environ.get("BENCH_DATABASE_URL"):
        citus = str(ROOT / "scripts" / "citus")
        for command in ("stop", "start"):
            await asyncio.to_thread(subprocess.run, [citus, command], check=True)
    else:
        raise RuntimeError("only an embedded server or the local Citus cluster is restarted")
    return await autoprewarm_done(url)


async def summed_over_nodes(conn: asyncpg.Connection, sql: str) -> int:
    """`sql`'s one number, summed over this node and, on a Citus coordinator, every worker:
    what each node holds of memories is its own (its shards, its buffers)."""
    total = int(await conn.fetchval(sql))
    if await on_citus(conn):
        rows = await conn.fetch("SELECT result FROM run_command_on_workers($1)", sql)
        total += sum(int(row["result"]) for row in rows)
    return total


# pg_prewarm's autoprewarm worker, reading the buffers back after a start.
_PREWARMING = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autoprewarm worker'"
PREWARM_START_S = 5.0  # a worker not seen by then had nothing to read


async def autoprewarm_done(url: str) -> float:
    """Until autoprewarm has read back what the buffers held (on Citus, on every node): a
    server some seconds after its start, not in its first. The seconds waited."""
    conn = await asyncpg.connect(url)
    try:
        started = time.monotonic()
        seen = False
        while True:
            busy = await summed_over_nodes(conn, _PREWARMING)
            seen = seen or busy > 0
            waited = time.monotonic() - started
            if not busy and (seen or waited > PREWARM_START_S):
                return waited
            await asyncio.sleep(0.2)
    finally:
        await conn.close()


def as_of(revision: str, path: str, name: str) -> Any:
    """`name` as another revision's module at `path` defines it (its own imports resolve to
    this tree's modules): for a benchmark that runs two revisions' statements side by side."""
    source = subprocess.run(
        ["git", "show", f"{revision}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType(f"bench_as_of_{revision}_{path.replace('/', '_')}")
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    return getattr(module, name)


@contextlib.contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """A checkout of another revision beside this one (git worktree), removed after: for a
    benchmark that runs that revision's server against the same database. A directory
    instead (a copy of a working tree whose changes are not committed) is used as it is."""
    if Path(revision).is_dir():
        yield Path(revision).resolve()
        return
    path = Path(tempfile.mkdtemp(prefix="am-bench-tree-"))
    subprocess.run(
        ["git", "worktree", "add", "--detach", "--force", str(path), revision],
        check=True,
        capture_output=True,
    )
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], check=False)


def tree_head_revision(tree: Path) -> str:
    """The schema revision the code in `tree` expects."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from app.db.migrations import head_revision; print(head_revision())",
        ],
        cwd=tree,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


async def server_timings(client: httpx.AsyncClient) -> dict[str, float]:
    """The server's own seconds so far (its /metrics): each phase of the store path, and the
    model's ("model": every embedding call, a search's query or a store's texts) and its
    texts ("texts"). A benchmark that sends one request at a time reads a request's own
    share as the difference around it."""
    text = (await client.get("/metrics")).raise_for_status().text
    seconds: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "agent_memory_store_phase_seconds_total":
                seconds[sample.labels["phase"]] = sample.value
            elif sample.name == "agent_memory_embedding_duration_seconds_sum":
                seconds["model"] = sample.value
            elif sample.name == "agent_memory_embedded_texts_total":
                seconds["texts"] = sample.value
    return seconds


class Cpu:
    """CPU seconds spent so far by the service (this process, or the server process
    `service`, the model's threads included) and by the PostgreSQL server the URL names
    (all its processes; found by the embedded server's socket directory)."""

    def __init__(self, url: str, service: int | None = None) -> None:
        socket_dir = parse_qs(urlsplit(url).query).get("host", [""])[0]
        self._service = psutil.Process(service) if service else psutil.Process()
        self._server = next(
            (p for p in psutil.process_iter(["name", "cmdline"])
             if p.info["name"] == "postgres" and socket_dir
             and any(socket_dir in part for part in p.info["cmdline"] or [])),
            None,
        )  # fmt: skip

    @property
    def sees_the_database(self) -> bool:
        return self._server is not None

    def now(self) -> tuple[float, float]:
        mine = self._service.cpu_times()
        database = 0.0
        if self._server is not None:
            for process in [self._server, *self._server.children()]:
                with contextlib.suppress(psutil.NoSuchProcess):
                    times = process.cpu_times()
                    database += times.user + times.system
        return mine.user + mine.system, database
