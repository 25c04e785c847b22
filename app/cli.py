"""agent-memory: long-term memory for coding agents. Run the service (serve, migrate, mcp),
use it (remember, search, list, show, export, import), and manage its keys."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app import __version__
from app.client import ClientError, MemoryClient, default_api_key, default_url
from app.config import Settings
from app.domain.text import cut, one_line
from app.logging import configure_logging

logger = logging.getLogger("agent_memory.cli")


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {}
    if getattr(args, "data_dir", None):
        overrides["AGENT_MEMORY_DATA_DIR"] = Path(args.data_dir)
    return Settings(**overrides)  # type: ignore[arg-type]


def cmd_migrate(args: argparse.Namespace) -> int:
    from app.db.migrations import head_revision, upgrade_head
    from app.main import resolve_database_url

    settings = _settings(args)
    url, embedded = resolve_database_url(settings)
    try:
        upgrade_head(url)
    finally:
        if embedded is not None:
            embedded.stop()
    logger.info("migrated", extra={"schema": head_revision()})
    return 0


def open_mode_allowed(url: str, host: str, settings: Settings) -> bool:
    """A server that would start open (no key has ever existed) stays on loopback unless
    told otherwise; with keys it may listen anywhere."""
    import asyncio

    import asyncpg

    from app.repository.keys import KeyRepository
    from app.services.auth import is_loopback

    async def keys_exist() -> bool:
        conn = await asyncpg.connect(url)
        try:
            return await KeyRepository(conn).any_ever()
        finally:
            await conn.close()

    if settings.require_keys or asyncio.run(keys_exist()):
        return True
    if is_loopback(host) or settings.allow_open_network:
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
    # The bind address decides whether open mode may apply (app.services.auth).
    settings = settings.model_copy(update={"host": host})
    url, embedded = resolve_database_url(settings)
    try:
        if embedded is not None or args.migrate:
            upgrade_head(url)
        if not open_mode_allowed(url, host, settings):
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
    """MCP over stdio, for clients that spawn the server as a process: in this process,
    or bridged to a running server when it has a URL."""
    import asyncio

    if args.url:
        from app.mcp.bridge import bridge

        with MemoryClient(args.url, args.api_key) as client:
            return bridge(client, sys.stdin.buffer, sys.stdout.buffer, Settings().max_body_bytes)

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


def client_of(args: argparse.Namespace) -> MemoryClient:
    return MemoryClient(args.url, args.api_key)


def cmd_remember(args: argparse.Namespace) -> int:
    """Record a learning in a running server."""
    fields = {f: getattr(args, f) for f in ("source_repo", "category", "name", "reasoning")}
    fields |= {"confidence": args.confidence, "context": args.context}
    with client_of(args) as memory:
        answer = memory.remember(args.text, **fields)
    print(answer["message"])
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    """A Claude Code hook: its JSON on stdin, its answer on stdout; always exit 0."""
    from app.claude_code_hooks import run_hook

    out, note = run_hook(args.event, sys.stdin.read(), args.url, args.api_key)
    if out:
        print(out)
    print(note, file=sys.stderr)
    return 0


def _print_memory_line(memory: dict[str, Any], score: float | None = None) -> None:
    lead = f"{score:5.3f}  " if score is not None else ""
    kind = memory["memory_type"][:14]
    print(f"{lead}{memory['id']}  {kind:14}  {cut(one_line(memory['content']), 80)}")


def cmd_search(args: argparse.Namespace) -> int:
    with client_of(args) as memory:
        types = [args.type] if args.type else None
        answer = memory.search(
            args.query, source_repo=args.source_repo, memory_type=types, limit=args.limit
        )
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    for hit in answer["results"]:
        _print_memory_line(hit["memory"], hit["score"])
    if not answer["results"]:
        print("no memories match", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with client_of(args) as memory:
        page = memory.list(source_repo=args.source_repo, memory_type=args.type, limit=args.limit)
    if args.json:
        print(json.dumps(page, indent=2, ensure_ascii=False))
        return 0
    for item in page["memories"]:
        _print_memory_line(item)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with client_of(args) as memory:
        item = memory.get(args.memory_id)
    if args.json:
        print(json.dumps(item, indent=2, ensure_ascii=False))
        return 0
    print(item["content"])
    print()
    for label in ("memory_type", "category", "tags", "source_repo", "trust_level", "pinned"):
        print(f"{label:>17}: {item[label]}")
    for label in ("context", "observation_count", "access_count", "created_at", "superseded_by"):
        if item.get(label) is not None:
            print(f"{label:>17}: {item[label]}")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """The tenant's audit trail, newest first; or undo one entry (admin key)."""
    with client_of(args) as memory:
        if args.undo:
            answer = memory.undo(args.undo)
        else:
            answer = memory.audit(
                memory_id=args.memory,
                action=args.action,
                since=args.since,
                limit=args.limit,
            )
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    if args.undo:
        restored = ", ".join(m["id"] for m in answer["memories"])
        print(f"undone: {args.undo} (entry {answer['undo']['id']}; restored {restored})")
        return 0
    for entry in answer:
        who = entry["actor_key"] or "open/service"
        targets = ",".join(entry["memory_ids"][:3])
        more = f" +{len(entry['memory_ids']) - 3}" if len(entry["memory_ids"]) > 3 else ""
        undone = f" (undone by {entry['undone_by']})" if entry["undone_by"] else ""
        print(
            f"{entry['at'][:19]}  {entry['id']}  {entry['action']:10} {entry['actor_role']:6}"
            f" {who}  {targets}{more}{undone}"
        )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """A tenant's memories as JSON lines, to a file or stdout."""
    from app.progress import Progress

    out = sys.stdout.buffer if args.output == "-" else open(args.output, "wb")  # noqa: SIM115
    progress: Progress | None = None
    try:
        with client_of(args) as memory:
            for line in memory.export(args.source_repo, args.embeddings):
                out.write(line.encode() + b"\n")
                if progress is None:  # the header says how many follow
                    total = json.loads(line).get("count")
                    progress = Progress("export", total, "memories")
                else:
                    progress.advance()
    finally:
        if out is not sys.stdout.buffer:
            out.close()
    if progress is not None:
        progress.close()
        where = "stdout" if args.output == "-" else args.output
        print(f"exported {progress.done} memories to {where}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """An export file into the server (idempotent: known content is reinforced)."""
    from app.progress import Progress

    source = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    size = None if args.file == "-" else os.fstat(source.fileno()).st_size
    progress = Progress("import", size, "bytes")

    def chunks() -> Iterator[bytes]:
        while chunk := source.read(IMPORT_CHUNK_BYTES):
            progress.advance(len(chunk))
            yield chunk

    try:
        with client_of(args) as memory:
            report = memory.import_lines(chunks())
    finally:
        progress.close()
        if source is not sys.stdin.buffer:
            source.close()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"imported {report['memories']} memories: {report['stored']} new,"
        f" {report['reinforced']} reinforced, {report['reembedded']} embedded here,"
        f" {report['linked']} supersede links ({report['unresolved_links']} unresolved)"
    )
    return 0


IMPORT_CHUNK_BYTES = 256 * 1024


def cmd_reembed(args: argparse.Namespace) -> int:
    """Re-embed every memory with the configured model while the service keeps serving."""
    import asyncio

    import asyncpg

    from app.db.migrations import current_revision, head_revision
    from app.domain.errors import AppError
    from app.embeddings.factory import build_embedder
    from app.main import resolve_database_url
    from app.progress import Progress
    from app.services.reembed import Reembedder

    settings = _settings(args)
    url, embedded = resolve_database_url(settings)

    async def run() -> int:
        conn = await asyncpg.connect(url)
        target = build_embedder(settings)
        try:
            if await current_revision(conn) != head_revision():
                print("agent-memory reembed: run `agent-memory migrate` first", file=sys.stderr)
                return 2
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
            print(
                f"re-embedding with {target.name} (vectors by {status.recorded_model});"
                " the service keeps serving the old vectors until the swap",
                file=sys.stderr,
            )
            bar = Progress("re-embedding", status.total or None, "memories")

            def advance(filled: int, total: int) -> None:
                bar.total = total
                bar.advance(filled - bar.done)

            await reembedder.run(advance)
            bar.close()
            print(
                f"done: the stored vectors are {target.name}'s. Restart each server with this"
                " model's settings; until then they search by keyword only.",
                file=sys.stderr,
            )
            return 0
        except AppError as exc:
            print(f"agent-memory reembed: {exc.detail}", file=sys.stderr)
            return 2
        finally:
            await conn.close()
            await target.aclose()

    try:
        return asyncio.run(run())
    finally:
        if embedded is not None:
            embedded.stop()


def cmd_keys(args: argparse.Namespace) -> int:
    """Key management straight against the database (as its owner, across tenants)."""
    import asyncio
    from uuid import UUID

    import asyncpg

    from app.db.migrations import current_revision, head_revision, upgrade_head
    from app.main import resolve_database_url
    from app.services.keys import KeyService

    settings = _settings(args)
    url, embedded = resolve_database_url(settings)

    async def run() -> int:
        conn = await asyncpg.connect(url)
        try:
            if await current_revision(conn) != head_revision():
                print(
                    "agent-memory keys: the database is not migrated; run `agent-memory migrate`",
                    file=sys.stderr,
                )
                return 2
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
                revoked = await service.revoke(None, UUID(args.key_id), args.force)
                print(f"revoked {revoked.record.id} ({revoked.record.name})")
                if revoked.note:
                    print(revoked.note, file=sys.stderr)
        finally:
            await conn.close()
        return 0

    try:
        if embedded is not None:
            upgrade_head(url)  # the embedded database is ours: bring it to the schema
        return asyncio.run(run())
    finally:
        if embedded is not None:
            embedded.stop()


HELP = argparse.ArgumentDefaultsHelpFormatter
CLIENT_COMMANDS = frozenset(
    {"remember", "search", "list", "show", "export", "import", "hook", "audit"}
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-memory", description=__doc__, formatter_class=HELP)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, parents: list[argparse.ArgumentParser]) -> Any:
        return sub.add_parser(
            name, help=help, description=help, parents=parents, formatter_class=HELP
        )

    data_dir = argparse.ArgumentParser(add_help=False)
    data_dir.add_argument(
        "--data-dir",
        help="where the embedded database lives (default AGENT_MEMORY_DATA_DIR or the"
        " user data directory); unused when DATABASE_URL is set",
    )
    client = argparse.ArgumentParser(add_help=False)
    client.add_argument("--url", default=default_url(), help="the server (AGENT_MEMORY_URL)")
    client.add_argument(
        "--api-key",
        default=default_api_key(),
        help="the key to send (AGENT_MEMORY_API_KEY); none in open mode",
    )
    shown = argparse.ArgumentParser(add_help=False)
    shown.add_argument("--json", action="store_true", help="print the API's JSON answer")
    filters = argparse.ArgumentParser(add_help=False)
    filters.add_argument("--source-repo", dest="source_repo", help="only this repository's")
    filters.add_argument("--type", help="only memories of this memory_type")
    filters.add_argument("--limit", type=int, default=10, help="at most this many")

    serve = command("serve", "run the HTTP and MCP service", [data_dir])
    serve.add_argument("--host", help="bind address (default HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default PORT or 8080)")
    serve.add_argument(
        "--migrate",
        action="store_true",
        help="also migrate an external DATABASE_URL before serving (embedded: always)",
    )
    serve.set_defaults(func=cmd_serve)

    command("migrate", "bring the database to the latest schema", [data_dir]).set_defaults(
        func=cmd_migrate
    )
    mcp = command("mcp", "serve the MCP tools over stdio", [data_dir])
    mcp.add_argument(
        "--url",
        default=os.environ.get("AGENT_MEMORY_URL") or None,
        help="bridge to this running server's /mcp (AGENT_MEMORY_URL) instead of serving"
        " from this process",
    )
    mcp.add_argument("--api-key", default=default_api_key(), help="the key (AGENT_MEMORY_API_KEY)")
    mcp.set_defaults(func=cmd_mcp)

    remember = command("remember", "record a learning in a running server", [client])
    remember.add_argument("text", help="the learning, at least 20 characters")
    remember.add_argument("--source-repo", dest="source_repo", help="the repository it is about")
    remember.add_argument("--category", help="filed under (inferred from the text if unset)")
    remember.add_argument("--context", help="the task or situation the learning came from")
    remember.add_argument("--name", help="a title (the first line if unset)")
    remember.add_argument("--reasoning", help="why it holds")
    remember.add_argument("--confidence", choices=["high", "medium", "low"], help="low if unset")
    remember.set_defaults(func=cmd_remember)

    search = command("search", "search memories (hybrid ranking)", [client, filters, shown])
    search.add_argument("query", help="what to look for")
    search.set_defaults(func=cmd_search)
    command("list", "the newest memories", [client, filters, shown]).set_defaults(func=cmd_list)
    show = command("show", "one memory, whole", [client, shown])
    show.add_argument("memory_id", help="the memory's id")
    show.set_defaults(func=cmd_show)

    audit = command(
        "audit", "the audit trail, newest first, or --undo (admin key)", [client, shown]
    )
    audit.add_argument("--memory", help="only entries about this memory id")
    audit.add_argument("--action", help="only this action (edit, prune, undo, ...)")
    audit.add_argument("--since", help="only entries from this time on (ISO 8601)")
    audit.add_argument("--limit", type=int, default=50, help="at most this many (1 to 500)")
    audit.add_argument("--undo", metavar="ENTRY_ID", help="undo this entry instead of listing")
    audit.set_defaults(func=cmd_audit)

    export = command("export", "write memories as JSON lines", [client])
    export.add_argument("--source-repo", dest="source_repo", help="only this repository's")
    export.add_argument(
        "--embeddings",
        action="store_true",
        help="include the vectors (kept by an import"
        " into a server with the same model; otherwise made again there)",
    )
    export.add_argument("-o", "--output", default="-", help="the file to write; - for stdout")
    export.set_defaults(func=cmd_export)
    importing = command("import", "read memories from an export (admin key)", [client, shown])
    importing.add_argument("file", help="an export's JSON lines; - for stdin")
    importing.set_defaults(func=cmd_import)

    hook = command("hook", "a Claude Code hook (JSON on stdin); never fails the agent", [client])
    hook.add_argument("event", choices=["session-start", "session-end"], help="the hook event")
    hook.set_defaults(func=cmd_hook)

    keys = command("keys", "create, list or revoke API keys (straight in the database)", [])
    keys_sub = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    create = keys_sub.add_parser(
        "create", help="create a key (printed once)", parents=[data_dir], formatter_class=HELP
    )
    create.add_argument("--tenant", default="default", help="the tenant it acts for")
    create.add_argument(
        "--role", choices=["agent", "reader", "admin"], default="agent", help="what it may do"
    )
    create.add_argument("--name", required=True, help="who or what holds it")
    listing = keys_sub.add_parser(
        "list",
        help="list keys (never the keys themselves)",
        parents=[data_dir],
        formatter_class=HELP,
    )
    listing.add_argument("--tenant", help="only this tenant's (default: all)")
    revoke = keys_sub.add_parser(
        "revoke", help="revoke a key by id", parents=[data_dir], formatter_class=HELP
    )
    revoke.add_argument("key_id", help="the key's id, from `keys list`")
    revoke.add_argument(
        "--force", action="store_true", help="revoke even a tenant's last active admin key"
    )
    keys.set_defaults(func=cmd_keys)
    reembed = command(
        "reembed",
        "re-embed every memory with the configured model (EMBEDDING_MODEL, EMBEDDING_DIM,"
        " EMBEDDING_PROVIDER) while the service keeps serving; stop and run again to resume",
        [data_dir],
    )
    reembed.add_argument("--status", action="store_true", help="say how far it is, and stop")
    reembed.add_argument("--cancel", action="store_true", help="abandon the re-embed under way")
    reembed.add_argument("--batch", type=int, default=64, help="memories per model call")
    reembed.set_defaults(func=cmd_reembed)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in CLIENT_COMMANDS:  # a client command prints its answer, nothing else
        settings = Settings()
        configure_logging(settings.log_level, settings.log_format)
    try:
        result: int = args.func(args)
    except ClientError as exc:
        fields = f" ({', '.join(exc.fields)})" if exc.fields else ""
        print(f"agent-memory {args.command}: {exc.detail}{fields}", file=sys.stderr)
        return 2 if exc.status == 0 else 1
    return result


if __name__ == "__main__":
    sys.exit(main())
