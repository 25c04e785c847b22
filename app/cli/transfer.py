"""agent-memory export and import, through a running server."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from app.cli.common import Adder, CommandError, Parents, client_of, repository_here, say

IMPORT_CHUNK_BYTES = 256 * 1024


def register(command: Adder, parents: Parents) -> None:
    export = command(
        "export",
        "write memories as JSON lines: the repository here's, as `list` reads it, or every"
        " repository's (--any-repo)",
        [parents.client, parents.scope, parents.time_window],
    )
    export.add_argument(
        "--embeddings",
        action="store_true",
        help="include the vectors (kept by an import"
        " into a server with the same model; otherwise made again there)",
    )
    export.add_argument(
        "-o",
        "--output",
        default="-",
        help="the file to write (replaced only once the export is complete); - for stdout",
    )
    export.set_defaults(func=cmd_export)
    importing = command(
        "import", "read memories from an export (admin key)", [parents.client, parents.shown]
    )
    importing.add_argument("file", help="an export's JSON lines; - for stdin")
    importing.set_defaults(func=cmd_import)


@contextlib.contextmanager
def _replaced_when_done(target: str) -> Iterator[IO[bytes]]:
    """A temporary file beside `target`, renamed onto it only when the block completes: a
    failed export (server down, refused, interrupted) leaves an existing backup as it was."""
    if target == "-":
        yield sys.stdout.buffer
        return
    if Path(target).is_dir():  # said before anything is read, not after the whole export
        raise CommandError(
            f"agent-memory export: {target} is a folder; name a file in it"
            f" ({Path(target) / 'memories.jsonl'}, say)"
        )
    folder = Path(target).resolve().parent
    if not folder.is_dir():
        raise CommandError(f"agent-memory export: no such folder: {folder}")
    handle, temporary = tempfile.mkstemp(prefix=".agent-memory-export-", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def cmd_export(args: argparse.Namespace) -> int:
    """A tenant's memories as JSON lines, to a file or stdout."""
    from app.progress import Progress

    progress: Progress | None = None
    header: dict[str, Any] = {}
    repo = repository_here(args)
    with _replaced_when_done(args.output) as out, client_of(args) as memory:
        for line in memory.export(repo, args.embeddings, args.since, args.until):
            out.write(line.encode() + b"\n")
            if progress is None:  # the header says how many follow: memories, then sessions
                header = json.loads(line)
                total = (header.get("count") or 0) + (header.get("sessions") or 0)
                progress = Progress("export", total, "lines")
            else:
                progress.advance()
    if progress is not None:
        progress.close()
        where = "stdout" if args.output == "-" else args.output
        memories, sessions = header.get("count") or 0, header.get("sessions") or 0
        counted = plural(memories, "memory", "memories")
        counted += f" and {plural(sessions, 'session', 'sessions')}"
        say(f"exported {counted} of {exported_from(repo)} to {where}")
    return 0


def exported_from(repo: str | None) -> str:
    """What an export read: said, since the default depends on the folder it runs in."""
    if repo is None:
        return "every repository"
    return (
        f"{json.dumps(repo, ensure_ascii=False)} (not the global memories nor other"
        " repositories: --any-repo exports them all)"
    )


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def cmd_import(args: argparse.Namespace) -> int:
    """An export file into the server (idempotent: known content is reinforced)."""
    from app.progress import Progress

    try:
        source = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        raise CommandError(f"agent-memory import: cannot read {args.file}: {exc.strerror}") from exc
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
        f" {report['reinforced']} reinforced, {report['already_here']} already here,"
        f" {report['reembedded']} embedded here,"
        f" {report['linked']} supersede links ({report['unresolved_links']} unresolved),"
        f" {report['sessions']} sessions,"
        f" {report['quarantined']} quarantined"
    )
    return 0
