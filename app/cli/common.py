"""What the commands share: the help format, the common options, one way to the local
database (embedded or DATABASE_URL, migrated or checked), one way to a running server."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

from app.client import MemoryClient, default_api_key, default_url
from app.config import Settings


class HELP(argparse.HelpFormatter):
    """The one help format: a default printed once, and only when it is a value. A help
    text that says its own default ("default: the git repository here") is left as it is;
    an unset option (None), a flag (False) and a secret (the API key, read from the
    environment when the command runs) print none."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        shown = action.default not in (None, False, argparse.SUPPRESS) and action.option_strings
        if shown and "default" not in text and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text


class CommandError(Exception):
    """An expected failure: one line on stderr, a non-zero exit, never a traceback."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def settings_of(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {}
    if getattr(args, "data_dir", None):
        overrides["AGENT_MEMORY_DATA_DIR"] = Path(args.data_dir)
    return Settings(**overrides)  # type: ignore[arg-type]


class Parents:
    """Options several commands take, each defined once."""

    def __init__(self) -> None:
        self.data_dir = argparse.ArgumentParser(add_help=False)
        self.data_dir.add_argument(
            "--data-dir",
            help="where the embedded database lives (default: AGENT_MEMORY_DATA_DIR or the"
            " user data directory); unused when DATABASE_URL is set",
        )
        self.client = argparse.ArgumentParser(add_help=False)
        self.client.add_argument(
            "--url", default=default_url(), help="the server (AGENT_MEMORY_URL)"
        )
        self.client.add_argument(
            "--api-key",
            help="the key to send (default: AGENT_MEMORY_API_KEY; none in open mode)",
        )
        self.shown = argparse.ArgumentParser(add_help=False)
        self.shown.add_argument("--json", action="store_true", help="print the API's JSON answer")
        # Which repository a command reads: one rule for search, list and export.
        self.scope = argparse.ArgumentParser(add_help=False)
        self.scope.add_argument(
            "--source-repo",
            dest="source_repo",
            help="this repository's (default: the git repository here, as owner/name from"
            " its origin remote; AGENT_MEMORY_REPO overrides)",
        )
        self.scope.add_argument(
            "--any-repo", action="store_true", help="every repository's, not the one here"
        )
        self.filters = argparse.ArgumentParser(add_help=False, parents=[self.scope])
        self.filters.add_argument("--type", help="only memories of this memory_type")
        self.time_window = argparse.ArgumentParser(add_help=False)
        self.time_window.add_argument(
            "--since", help="only memories stored since then (2026-11-01, 7d, yesterday, ...)"
        )
        self.time_window.add_argument("--until", help="only memories stored before then")
        self.filters.add_argument("--limit", type=int, default=10, help="at most this many")


Adder = Callable[[str, str, list[argparse.ArgumentParser]], Any]


def repository_here(args: argparse.Namespace) -> str | None:
    """--source-repo, else (without --any-repo / --global) the git repository here."""
    from agent_memory_client.git import repository_name

    if getattr(args, "source_repo", None):
        return str(args.source_repo)
    if getattr(args, "any_repo", False) or getattr(args, "global_", False):
        return None
    return repository_name(os.getcwd())


def written_here(args: argparse.Namespace) -> dict[str, str | None]:
    """A write's repository (repository_here) and, when that is the checkout here, the
    branch and commit it is written at: staleness counts from that commit."""
    from agent_memory_client.git import git_state

    state = git_state(os.getcwd())  # its repository is repository_here's default
    named = getattr(args, "source_repo", None) or getattr(args, "global_", False)
    repo = repository_here(args) if named else state.repository
    here = repo is not None and repo == state.repository
    return {
        "source_repo": repo,
        "git_branch": state.branch if here else None,
        "git_commit": state.commit if here else None,
    }


def client_of(args: argparse.Namespace) -> MemoryClient:
    """The one way to a running server (the URL, the key, the errors: app/client.py)."""
    return MemoryClient(args.url, api_key_of(args))


def api_key_of(args: argparse.Namespace) -> str | None:
    """--api-key, else AGENT_MEMORY_API_KEY: read when the command runs, so that no help
    text or parser default ever holds the key."""
    key: str | None = args.api_key or default_api_key()
    return key


def memory_id(text: str) -> str:
    return _uuid(text, "memory")


def memory_ref(text: str) -> str:
    """A memory's id, or the start of one as a listing shows it (the server resolves it)."""
    from app.domain.errors import InvalidInputError
    from app.domain.id_prefix import MIN_PREFIX_DIGITS, id_prefix

    try:
        return str(UUID(text))
    except ValueError:
        pass
    try:
        return id_prefix(text).text
    except InvalidInputError:
        raise CommandError(
            f"'{text[:40]}' is not a memory id nor the start of one ({MIN_PREFIX_DIGITS} or"
            " more of its hex digits, as `list` shows them)"
        ) from None


def session_id(text: str) -> str:
    return _uuid(text, "session")


def _uuid(text: str, kind: str) -> str:
    try:
        return str(UUID(text))
    except ValueError:
        raise CommandError(
            f"'{text[:40]}' is not a valid {kind} id (ids look like"
            " 0193c0de-5a1e-7b2c-9d3e-4f5a6b7c8d9e)"
        ) from None


@contextmanager
def local_database(args: argparse.Namespace, *, migrate: bool) -> Iterator[str]:
    """The database this machine serves: DATABASE_URL, or the embedded server (started for
    the command, stopped after it; always brought to the schema, it being ours). With
    `migrate`, an external database is brought to the schema too."""
    from app.db.migrations import upgrade_head
    from app.startup import resolve_database_url

    url, embedded = resolve_database_url(settings_of(args))
    try:
        if embedded is not None or migrate:
            upgrade_head(url)
        yield url
    finally:
        if embedded is not None:
            embedded.stop()


async def require_schema(conn: Any, command: str) -> None:
    """The one schema check of the commands that work on the database directly."""
    from app.db.migrations import current_revision, head_revision

    if await current_revision(conn) != head_revision():
        raise CommandError(
            f"agent-memory {command}: the database is not migrated; run `agent-memory migrate`"
        )


@asynccontextmanager
async def owner_connection(url: str, command: str) -> AsyncIterator[Any]:
    """A connection to the migrated database as its owner, for a command that works on it
    directly (keys, isolate-tenant); a refusal raised inside is the command's one line."""
    import asyncpg

    from app.domain.errors import AppError

    conn = await asyncpg.connect(url)
    try:
        await require_schema(conn, command)
        yield conn
    except AppError as exc:
        field = f" ({exc.field})" if exc.field else ""
        raise CommandError(f"agent-memory {command}: {exc.detail}{field}") from exc
    finally:
        await conn.close()


T = TypeVar("T")


def run_async(work: Awaitable[T]) -> T:
    return asyncio.run(_awaited(work))


async def _awaited(work: Awaitable[T]) -> T:
    return await work


def say(message: str) -> None:
    print(message, file=sys.stderr)
