"""What the commands share: the help format, the common options, one way to the local
database (embedded or DATABASE_URL, migrated or checked, and the one a running server uses),
one way to a running server."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit
from uuid import UUID

import platformdirs

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


def limit_of(args: argparse.Namespace) -> int:
    """--limit, within the range its command set (`max_limit`), said before the server is
    asked (the server refuses it the same way)."""
    if not 1 <= args.limit <= args.max_limit:
        raise CommandError(
            f"agent-memory {args.command}: --limit must be 1 to {args.max_limit}, not {args.limit}"
        )
    limit: int = args.limit
    return limit


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
def local_database(
    args: argparse.Namespace, *, migrate: bool, follow_running: bool = False
) -> Iterator[str]:
    """The database this machine serves: DATABASE_URL, or the embedded server (started for
    the command, stopped after it; always brought to the schema, it being ours). With
    `migrate`, an external database is brought to the schema too. With `follow_running`,
    the one a running server uses when none is named, and the command says which
    (addressed()). A server (serve, mcp) records the database it uses while it runs."""
    from app.db.migrations import upgrade_head
    from app.startup import resolve_database_url

    settings = settings_of(args)
    if follow_running:
        settings = addressed(args, settings)
    url, embedded = resolve_database_url(settings)
    try:
        with serving_recorded(args, settings):
            if embedded is not None or migrate:
                upgrade_head(url)
            yield url
    finally:
        if embedded is not None:
            embedded.stop()


# ---- the database a running server uses ---------------------------------------------------

SERVING_COMMANDS = ("serve", "mcp")


@dataclass(frozen=True, slots=True)
class Serving:
    """A server running on this machine (its record, written while it runs)."""

    pid: int
    command: str
    data_dir: Path | None  # None: an external database
    database: str  # which, in words: an embedded data directory, or a URL without secrets

    def named(self) -> str:
        return f"pid {self.pid}, `agent-memory {self.command}`"


def serving_records() -> Path:
    return Path(platformdirs.user_state_dir("agent-memory")) / "serving"


def database_in_words(settings: Settings) -> str:
    if settings.database_url:
        parts = urlsplit(settings.database_url)
        host = parts.hostname or parse_qs(parts.query).get("host", ["a local socket"])[0]
        port = f":{parts.port}" if parts.port else ""
        return f"the database {parts.path.lstrip('/')} at {host}{port} (DATABASE_URL)"
    return f"the embedded database in {settings.data_dir.resolve()}"


def _started(pid: int) -> float | None:
    """When process `pid` started (None: no such process): a pid reused since a record was
    written is another process."""
    import psutil

    try:
        return float(psutil.Process(pid).create_time())
    except psutil.Error:
        return None


@contextmanager
def serving_recorded(args: argparse.Namespace, settings: Settings) -> Iterator[None]:
    """While a server runs, a record of the database it uses, where `keys` looks first."""
    if getattr(args, "command", None) not in SERVING_COMMANDS:
        yield
        return
    record = serving_records() / f"{os.getpid()}.json"
    data_dir = None if settings.database_url else str(settings.data_dir.resolve())
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({
            "pid": os.getpid(), "started": _started(os.getpid()), "command": args.command,
            "data_dir": data_dir, "database": database_in_words(settings),
        }))  # fmt: skip
    except OSError:
        pass  # a server serves without its record; `keys` then says which database it used
    try:
        yield
    finally:
        record.unlink(missing_ok=True)


def running_servers() -> list[Serving]:
    """The servers running now, by their records (a record left by one killed is dropped)."""
    found = []
    for path in sorted(serving_records().glob("*.json")):
        try:
            record = json.loads(path.read_text())
            pid, started = int(record["pid"]), record["started"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if pid == os.getpid():
            continue
        if started is None or _started(pid) != started:
            path.unlink(missing_ok=True)
            continue
        data_dir = Path(record["data_dir"]) if record.get("data_dir") else None
        found.append(Serving(pid, str(record["command"]), data_dir, str(record["database"])))
    return found


def addressed(args: argparse.Namespace, settings: Settings) -> Settings:
    """The database a command that works on it directly addresses, said on stderr:
    DATABASE_URL, --data-dir or AGENT_MEMORY_DATA_DIR when set; else the one the running
    server uses; else the default data directory. A server running on another database
    is said too: a key made in a database no server reads would never work."""
    servers = running_servers()
    default_dir = Settings.model_fields["data_dir"].get_default(call_default_factory=True)
    named = settings.database_url or getattr(args, "data_dir", None)
    if not named and settings.data_dir == default_dir:
        embedded = {s.data_dir for s in servers if s.data_dir is not None}
        if len(embedded) > 1:
            listed = "; ".join(f"{s.data_dir} ({s.named()})" for s in servers if s.data_dir)
            raise CommandError(
                f"servers run on several data directories ({listed}): say which with --data-dir"
            )
        if embedded:
            settings = settings.model_copy(update={"data_dir": embedded.pop()})
    database = database_in_words(settings)
    users = [s for s in servers if s.database == database]
    command = f"agent-memory {getattr(args, 'command', '')}".strip()
    if users:
        say(f"{command}: {database}, which the running server uses ({users[0].named()})")
    elif servers:
        other = servers[0]
        where = f" (--data-dir {other.data_dir})" if other.data_dir else ""
        say(
            f"{command}: {database}; warning: no running server uses it, the one running"
            f" ({other.named()}) uses {other.database}{where}"
        )
    else:
        say(f"{command}: {database} (no agent-memory server is running here)")
    return settings


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
