"""Shared by the benchmarks: a throwaway database (embedded unless DATABASE_URL is set)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg

from app.db.embedded import EmbeddedPostgres
from app.db.migrations import upgrade_head_async


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
    try:
        yield url
    finally:
        if embedded is not None:
            embedded.stop()
        # A throwaway cluster is a few hundred MB; only BENCH_DATA_DIR is kept between runs.
        if scratch_dir is not None:
            shutil.rmtree(scratch_dir, ignore_errors=True)


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
    benchmark that runs that revision's server against the same database."""
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
