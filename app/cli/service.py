"""Commands that run the service or work on its database in this process: serve, migrate,
mcp (stdio), explain-search, reembed, graphs."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys

from app.cli.common import (
    Adder,
    CommandError,
    Parents,
    api_key_of,
    local_database,
    require_schema,
    run_async,
    say,
    settings_of,
)
from app.config import Settings

logger = logging.getLogger("agent_memory.cli")


def register(command: Adder, parents: Parents) -> None:
    serve = command("serve", "run the HTTP and MCP service", [parents.data_dir])
    serve.add_argument("--host", help="bind address (default HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default PORT or 8080)")
    serve.add_argument(
        "--migrate",
        action="store_true",
        help="also migrate an external DATABASE_URL before serving (embedded: always)",
    )
    serve.set_defaults(func=cmd_serve)

    migrate = command("migrate", "bring the database to the latest schema", [parents.data_dir])
    migrate.set_defaults(func=cmd_migrate)

    mcp = command("mcp", "serve the MCP tools over stdio", [parents.data_dir])
    mcp.add_argument(
        "--url",
        default=os.environ.get("AGENT_MEMORY_URL") or None,
        help="bridge to this running server's /mcp (AGENT_MEMORY_URL) instead of serving"
        " from this process",
    )
    mcp.add_argument("--api-key", help="the key (default: AGENT_MEMORY_API_KEY)")
    mcp.add_argument(
        "--verbose", action="store_true", help="log each request on stderr (quiet by default)"
    )
    mcp.set_defaults(func=cmd_mcp, quiet_logs=True)

    explain = command(
        "explain-search",
        "print the statement a search sends, with its values, and EXPLAIN (ANALYZE, BUFFERS)"
        " of it (on this machine's database; accesses are not counted)",
        [parents.data_dir],
    )
    explain.add_argument("query", help="what to look for")
    explain.add_argument("--source-repo", dest="source_repo", help="only this repository's")
    explain.add_argument("--type", dest="memory_type", action="append", help="a memory_type")
    explain.add_argument("--tag", dest="tags", action="append", help="a tag it must have")
    explain.add_argument("--alpha", type=float, help="vector weight (default HYBRID_ALPHA)")
    explain.add_argument("--limit", type=int, default=10, help="results")
    explain.add_argument("--tenant", default="default", help="the tenant whose rows it reads")
    explain.set_defaults(func=cmd_explain_search)

    reembed = command(
        "reembed",
        "re-embed every memory with the configured model (EMBEDDING_MODEL, EMBEDDING_DIM,"
        " EMBEDDING_PROVIDER) while the service keeps serving; stop and run again to resume",
        [parents.data_dir],
    )
    reembed.add_argument("--status", action="store_true", help="say how far it is, and stop")
    reembed.add_argument("--cancel", action="store_true", help="abandon the re-embed under way")
    reembed.add_argument("--batch", type=int, default=64, help="memories per model call")
    reembed.set_defaults(func=cmd_reembed)

    graphs = command(
        "graphs",
        "give each repository of at least REPOSITORY_GRAPH_ROWS live memories an HNSW graph"
        " of its own, which its searches walk, and drop those of repositories below half of"
        " it (the service's schedule does this too); as the database's owner",
        [parents.data_dir],
    )
    graphs.add_argument("--dry-run", action="store_true", help="say what it would do, and stop")
    graphs.set_defaults(func=cmd_graphs)


def cmd_migrate(args: argparse.Namespace) -> int:
    from app.db.migrations import head_revision

    with local_database(args, migrate=True):
        logger.info("migrated", extra={"schema": head_revision()})
    return 0


FIRST_KEY_NOTICE = """
================================================================================
agent-memory: no API key existed and this server listens on {host}, so it
created the first admin key (tenant "default"). It is shown only now:

    {key}

Use it as AGENT_MEMORY_API_KEY (the console's sign-in, import, key management);
create agent keys with it: POST /keys, or `agent-memory keys create`.
================================================================================
"""


def first_key_on_network(url: str, host: str, settings: Settings) -> None:
    """A server that would start open (no key has ever existed) on a network address, which
    open mode never serves (unless ALLOW_OPEN_NETWORK): it creates the first admin key and
    shows it once, so that `docker compose up` on a fresh volume starts, keyed."""
    import asyncpg

    from app.services.auth import is_loopback
    from app.services.keys import KeyService

    if settings.require_keys or is_loopback(host) or settings.allow_open_network:
        return

    async def create_if_none() -> str | None:
        conn = await asyncpg.connect(url)
        try:
            async with conn.transaction():
                created = await KeyService.on_connection(conn).first_admin()
            return created.key if created else None
        finally:
            await conn.close()

    key = run_async(create_if_none())
    if key is not None:
        print(FIRST_KEY_NOTICE.format(host=host, key=key), file=sys.stderr, flush=True)


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.http_server import server_config
    from app.main import create_app

    settings = settings_of(args)
    host = args.host or settings.host
    port = args.port or settings.port
    # The bind address decides whether open mode may apply (app.services.auth).
    settings = settings.model_copy(update={"host": host})
    with local_database(args, migrate=args.migrate) as url:
        first_key_on_network(url, host, settings)
        app = create_app(settings, database_url=url)
        logger.info(
            "starting",
            extra={
                "url": f"http://{host}:{port}",
                "database": "external" if settings.database_url else "embedded",
                "data_dir": None if settings.database_url else str(settings.data_dir),
            },
        )
        # uvicorn drains in-flight requests on SIGTERM/SIGINT, then re-raises the signal;
        # turning it into SystemExit lets the block end and stop the embedded server.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, _exit_cleanly)
        server = uvicorn.Server(server_config(app, settings, host, port))
        with contextlib.suppress(SystemExit):
            server.run()
        if not server.started:  # uvicorn logged why (the port is taken, say) and gave up
            logger.error(f"could not serve on {host}:{port}")
            return 1
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """MCP over stdio, for clients that spawn the server as a process: in this process,
    or bridged to a running server when it has a URL."""
    if args.url:
        from agent_memory_client.bridge import bridge

        return bridge(
            sys.stdin.buffer, sys.stdout.buffer, os.getcwd(), args.url, api_key_of(args),
            max_line_bytes=Settings().max_body_bytes,
        )  # fmt: skip

    from app.domain.errors import AppError
    from app.mcp.server import build_mcp_server, current_principal
    from app.mcp.stdio import serve_stdio
    from app.services.scheduler import background_pruning
    from app.startup import open_runtime

    settings = settings_of(args)

    async def serve(url: str) -> int:
        async with open_runtime(settings, database_url=url) as runtime:
            # The process acts for one key (AGENT_MEMORY_API_KEY), or open when none exist.
            key = os.environ.get("AGENT_MEMORY_API_KEY") or None
            try:
                principal = await runtime.authenticator.authenticate(key)
            except AppError as exc:
                raise CommandError(
                    f"agent-memory mcp: {exc.detail} (set AGENT_MEMORY_API_KEY)"
                ) from exc
            current_principal.set(principal)
            server = build_mcp_server(lambda: runtime)
            async with background_pruning(runtime):
                await serve_stdio(server, settings.max_body_bytes)
        return 0

    with local_database(args, migrate=False) as url:
        return run_async(serve(url))


def cmd_explain_search(args: argparse.Namespace) -> int:
    from app.domain.filters import FilterRequest
    from app.domain.inputs.search import SearchRequest
    from app.domain.principal import system_principal
    from app.services.scope import services_for
    from app.startup import open_runtime

    settings = settings_of(args)
    asked = SearchRequest(
        q=args.query,
        filter=FilterRequest(
            source_repo=args.source_repo, memory_type=args.memory_type, tags=args.tags
        ),
        alpha=args.alpha,
        limit=args.limit,
    )

    async def explain(url: str) -> int:
        async with (
            open_runtime(settings, database_url=url) as runtime,
            services_for(runtime, system_principal(args.tenant)) as services,
        ):
            statement, plan = await services.search.explain(asked)
        print("-- the statement as the search sends it, ready for psql (psql -f)")
        print(statement.psql())
        print("\n-- EXPLAIN (ANALYZE, BUFFERS), planned as the server plans it")
        print("\n".join(f"-- {line}" for line in plan))
        return 0

    with local_database(args, migrate=False) as url:
        return run_async(explain(url))


def cmd_reembed(args: argparse.Namespace) -> int:
    """Re-embed every memory with the configured model while the service keeps serving."""
    import asyncpg

    from app.domain.errors import AppError
    from app.embeddings.factory import build_embedder
    from app.progress import Progress
    from app.services.reembed import Reembedder

    settings = settings_of(args)

    async def run(url: str) -> int:
        conn = await asyncpg.connect(url)
        target = build_embedder(settings)
        try:
            await require_schema(conn, "reembed")
            reembedder = Reembedder(conn, target, args.batch)
            status = await reembedder.status()
            if args.status or args.cancel:
                if args.cancel and status.under_way:
                    await reembedder.cancel()
                    print(f"cancelled the re-embed to {status.under_way.target_model}")
                elif status.under_way:
                    print(
                        f"vectors by {status.recorded_model}; re-embedding to"
                        f" {status.under_way.target_model} since"
                        f" {status.under_way.started_at:%Y-%m-%d %H:%M}:"
                        f" {status.filled} of {status.total}"
                    )
                else:
                    print(f"vectors by {status.recorded_model}; no re-embed under way")
                return 0
            say(
                f"re-embedding with {target.name} (vectors by {status.recorded_model});"
                " the service keeps serving the old vectors until the swap"
            )
            bar = Progress("re-embedding", status.total or None, "memories")

            def advance(filled: int, total: int) -> None:
                bar.total = total
                bar.advance(filled - bar.done)

            await reembedder.run(advance)
            bar.close()
            say(
                f"done: the stored vectors are {target.name}'s. Restart each server with this"
                " model's settings; until then they search by keyword only."
            )
            return 0
        except AppError as exc:
            raise CommandError(f"agent-memory reembed: {exc.detail}") from exc
        finally:
            await conn.close()
            await target.aclose()

    with local_database(args, migrate=False) as url:
        return run_async(run(url))


def cmd_graphs(args: argparse.Namespace) -> int:
    """Build and drop repositories' own graphs now (docs/search.md, "A repository's own graph")."""
    import asyncpg

    from app.domain.graphs import RepositoryGraph
    from app.services.graphs import GraphKeeper

    min_rows = settings_of(args).repository_graph_rows

    def line(act: str, graph: RepositoryGraph) -> str:
        where = f"{graph.tenant_id}/{graph.source_repo}" if graph.source_repo else "(gone)"
        return f"{act} {graph.name}: {where}, {graph.live_rows} live memories"

    async def run(url: str) -> int:
        conn = await asyncpg.connect(url)
        try:
            await require_schema(conn, "graphs")
            graphs = GraphKeeper(conn, min_rows)
            if args.dry_run:
                plan = await graphs.plan()
                for act, chosen in (
                    ("build", plan.build),
                    ("drop", plan.drop),
                    ("keep", plan.keep),
                ):
                    for graph in chosen:
                        print(line(act, graph))
                return 0
            done = await graphs.keep(lambda act, graph: print(line(act, graph), flush=True))
            if done is None:
                raise CommandError("agent-memory graphs: another server is building graphs now")
            for graph in done.keep:
                print(line("kept", graph))
            if not (done.build or done.drop or done.keep):
                say(f"no repository has {min_rows} live memories (REPOSITORY_GRAPH_ROWS)")
            return 0
        except asyncpg.InsufficientPrivilegeError as exc:
            raise CommandError(
                "agent-memory graphs: this login does not own the memories table; run it with"
                " the owner's DATABASE_URL"
            ) from exc
        finally:
            await conn.close()

    with local_database(args, migrate=False) as url:
        return run_async(run(url))
