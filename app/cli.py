"""The `agent-memory` command: serve, migrate, mcp (stdio), remember, keys."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path

from app.config import Settings
from app.logging import configure_logging

logger = logging.getLogger("agent_memory.cli")


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {}
    if getattr(args, "data_dir", None):
        overrides["AGENT_MEMORY_DATA_DIR"] = Path(args.data_dir)
    return Settings(**overrides)  # type: ignore[arg-type]


def cmd_migrate(args: argparse.Namespace) -> int:
    from app.db.migrations import upgrade_head
    from app.main import resolve_database_url

    settings = _settings(args)
    url, embedded = resolve_database_url(settings)
    try:
        upgrade_head(url)
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def open_mode_allowed(url: str, host: str, allow_open_network: bool) -> bool:
    """With no API keys the server is open: say so, and stay on loopback unless told."""
    import asyncio

    import asyncpg

    from app.repository.keys import KeyRepository

    async def keys_exist() -> bool:
        conn = await asyncpg.connect(url)
        try:
            return await KeyRepository(conn).any_active()
        finally:
            await conn.close()

    if asyncio.run(keys_exist()):
        return True
    logger.warning(
        "no API keys configured: running OPEN, every caller is admin of the default tenant"
        " (create one with `agent-memory keys create --name ...`)"
    )
    if host in LOOPBACK or host.startswith("127.") or allow_open_network:
        return True
    logger.error(
        f"refusing to listen on {host} without API keys; create a key, bind to 127.0.0.1,"
        " or set ALLOW_OPEN_NETWORK=true"
    )
    return False


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.db.migrations import upgrade_head
    from app.main import create_app, resolve_database_url

    settings = _settings(args)
    host = args.host or settings.host
    port = args.port or settings.port
    url, embedded = resolve_database_url(settings)
    try:
        if embedded is not None or args.migrate:
            upgrade_head(url)
        if not open_mode_allowed(url, host, settings.allow_open_network):
            return 2
        app = create_app(settings, database_url=url)
        logger.info(
            "starting",
            extra={
                "url": f"http://{host}:{port}",
                "database": "embedded" if embedded else "external",
                "data_dir": str(settings.data_dir) if embedded else None,
            },
        )
        # uvicorn drains in-flight requests on SIGTERM/SIGINT, then re-raises the signal;
        # turning it into SystemExit lets the finally below stop the embedded server cleanly.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, _exit_cleanly)
        server = uvicorn.Server(
            uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False)
        )
        with contextlib.suppress(SystemExit):
            server.run()
        if not server.started:  # uvicorn logged why (the port is taken, say) and gave up
            logger.error(f"could not serve on {host}:{port}")
            return 1
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """MCP over stdio, for clients that spawn the server as a process."""
    import asyncio

    from app.db.migrations import upgrade_head
    from app.domain.errors import AppError
    from app.main import background_pruning, open_runtime, resolve_database_url
    from app.mcp.server import build_mcp_server, current_principal
    from app.mcp.stdio import serve_stdio

    settings = _settings(args)
    url, embedded = resolve_database_url(settings)
    try:
        if embedded is not None:
            upgrade_head(url)

        async def serve() -> int:
            async with open_runtime(settings, database_url=url) as runtime:
                # The process acts for one key (AGENT_MEMORY_API_KEY), or open when none exist.
                key = os.environ.get("AGENT_MEMORY_API_KEY") or None
                try:
                    principal = await runtime.authenticator.authenticate(key)
                except AppError as exc:
                    print(
                        f"agent-memory mcp: {exc.detail} (set AGENT_MEMORY_API_KEY)",
                        file=sys.stderr,
                    )
                    return 2
                current_principal.set(principal)
                server = build_mcp_server(lambda: runtime)
                async with background_pruning(runtime):
                    await serve_stdio(server, settings.max_body_bytes)
            return 0

        return asyncio.run(serve())
    finally:
        if embedded is not None:
            embedded.stop()


def cmd_remember(args: argparse.Namespace) -> int:
    """Record a learning in a running server."""
    import httpx

    body = {"text": args.text}
    for field in ("source_repo", "category", "name", "reasoning", "confidence", "context"):
        if getattr(args, field):
            body[field] = getattr(args, field)
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    try:
        response = httpx.post(
            f"{args.url.rstrip('/')}/remember", json=body, headers=headers, timeout=30
        )
    except httpx.HTTPError as exc:
        print(f"agent-memory is not reachable at {args.url}: {exc}", file=sys.stderr)
        return 2
    payload = response.json()
    if response.is_success:
        print(payload["message"])
        return 0
    print(payload.get("detail", response.text), file=sys.stderr)
    return 1


def cmd_keys(args: argparse.Namespace) -> int:
    """Key management straight against the database (as its owner, across tenants)."""
    import asyncio
    from uuid import UUID

    import asyncpg

    from app.main import resolve_database_url
    from app.services.keys import KeyService

    settings = _settings(args)
    url, embedded = resolve_database_url(settings)

    async def run() -> int:
        conn = await asyncpg.connect(url)
        try:
            service = KeyService(conn)
            if args.keys_command == "create":
                created = await service.create(args.tenant, args.name, args.role)
                print(created.key)
                print(
                    f"created {created.record.role} key {created.record.id} for tenant "
                    f"{created.record.tenant_id}: store it now, it is not shown again",
                    file=sys.stderr,
                )
            elif args.keys_command == "list":
                for key in await service.list(args.tenant):
                    state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
                    print(
                        f"{key.id}  {key.tenant_id}  {key.role:6}  {key.prefix}…"
                        f"  {key.name}  {state}"
                    )
            else:
                revoked = await service.revoke(None, UUID(args.key_id))
                print(f"revoked {revoked.id} ({revoked.name})")
        finally:
            await conn.close()
        return 0

    try:
        return asyncio.run(run())
    finally:
        if embedded is not None:
            embedded.stop()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-memory", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP service (embedded Postgres by default)")
    serve.add_argument("--host", help="bind address (default HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default PORT or 8080)")
    serve.add_argument("--data-dir", help="where the embedded database lives")
    serve.add_argument(
        "--migrate",
        action="store_true",
        help="also migrate an external DATABASE_URL before serving (embedded: always)",
    )
    serve.set_defaults(func=cmd_serve)

    migrate = sub.add_parser("migrate", help="alembic upgrade head")
    migrate.add_argument("--data-dir", help="where the embedded database lives")
    migrate.set_defaults(func=cmd_migrate)

    mcp = sub.add_parser("mcp", help="serve the MCP tools over stdio")
    mcp.add_argument("--data-dir", help="where the embedded database lives")
    mcp.set_defaults(func=cmd_mcp)

    remember = sub.add_parser("remember", help="record a learning in a running server")
    remember.add_argument("text", help="the learning, at least 20 characters")
    remember.add_argument("--source-repo", dest="source_repo")
    remember.add_argument("--category")
    remember.add_argument("--context", help="the task or situation the learning came from")
    remember.add_argument("--name")
    remember.add_argument("--reasoning")
    remember.add_argument("--confidence", choices=["high", "medium", "low"])
    remember.add_argument(
        "--url",
        default=os.environ.get("AGENT_MEMORY_URL", "http://127.0.0.1:8080"),
        help="the server (default AGENT_MEMORY_URL or http://127.0.0.1:8080)",
    )
    remember.add_argument(
        "--api-key",
        default=os.environ.get("AGENT_MEMORY_API_KEY"),
        help="the key to send (default AGENT_MEMORY_API_KEY; none in open mode)",
    )
    remember.set_defaults(func=cmd_remember)

    keys = sub.add_parser("keys", help="create, list or revoke API keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    data_dir = argparse.ArgumentParser(add_help=False)
    data_dir.add_argument("--data-dir", help="where the embedded database lives")
    create = keys_sub.add_parser("create", help="create a key (printed once)", parents=[data_dir])
    create.add_argument("--tenant", default="default")
    create.add_argument("--role", choices=["agent", "reader", "admin"], default="agent")
    create.add_argument("--name", required=True)
    listing = keys_sub.add_parser(
        "list", help="list keys (never the keys themselves)", parents=[data_dir]
    )
    listing.add_argument("--tenant")
    revoke = keys_sub.add_parser("revoke", help="revoke a key by id", parents=[data_dir])
    revoke.add_argument("key_id")
    keys.set_defaults(func=cmd_keys)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command != "remember":  # a client command prints its answer, nothing else
        configure_logging(Settings().log_level)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
