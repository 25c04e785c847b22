"""`agent-memory render FILE`: a repository's standing memories written into a marked
section of a file that an agent without hooks reads (AGENTS.md,
.github/copilot-instructions.md, .cursor/rules/agent-memory.mdc), through a running server.

Only the section between its markers is ever rewritten; the rest of the file stays as it
was, byte for byte (client/agent_memory_client/rule_files/section.py). A section changed
by hand since it was written is refused, with the difference, unless --force. With
--check nothing is written: exit 0 when the section is as render would write it, 1 when it
is not (for CI or a pre-commit hook), 2 when it cannot say (no server, a bad file)."""

from __future__ import annotations

import argparse
import difflib
import os
import tempfile
from pathlib import Path

from app.cli.common import Adder, CommandError, Parents, client_of, say
from app.client import ClientError, error_line
from app.domain.standing import DEFAULT_CHARS, MAX_CHARS, MIN_CHARS

# A new Cursor rule: what Cursor asks of one to hand it to every session.
CURSOR_HEAD = (
    "---\ndescription: What agent-memory holds for this repository (agent-memory render)\n"
    "alwaysApply: true\n---\n\n"
)
OUT_OF_DATE = 1


def register(command: Adder, parents: Parents) -> None:
    render = command(
        "render",
        "write the repository's standing memories (pinned, decisions, conventions,"
        " anti-patterns) into a marked section of FILE, for agents that only read files"
        " (AGENTS.md, .github/copilot-instructions.md, .cursor/rules/agent-memory.mdc);"
        " the rest of FILE is never touched",
        [parents.client],
    )
    render.add_argument("file", metavar="FILE", help="the file (created when missing)")
    render.add_argument(
        "--source-repo",
        dest="source_repo",
        help="whose memories (default: the repository FILE is in, as the hooks name it)",
    )
    render.add_argument(
        "--max-chars",
        type=int,
        help=f"the memories' budget, {MIN_CHARS} to {MAX_CHARS} (default: {DEFAULT_CHARS})",
    )
    render.add_argument(
        "--check",
        action="store_true",
        help="write nothing: exit 1 when the section is out of date (or changed by hand), 0"
        " when it is as render writes it",
    )
    render.add_argument(
        "--force", action="store_true", help="rewrite a section changed by hand all the same"
    )
    render.set_defaults(func=cmd_render)


def repository_of(path: Path, named: str | None) -> str:
    from agent_memory_client.git import repository_name, top_level

    if named:
        return named
    folder = path.parent
    while not folder.is_dir():
        folder = folder.parent
    if top_level(folder) is None:
        raise CommandError(f"{path} is in no git repository: name it with --source-repo")
    repo = repository_name(folder)
    if repo is None:
        raise CommandError(f"{path}: its repository has no name (--source-repo names it)")
    return repo


def read(path: Path) -> str | None:
    from agent_memory_client.rule_files.section import ENCODING, ERRORS

    if not path.exists():
        return None
    if not path.is_file():
        raise CommandError(f"{path} is not a file")
    try:
        return path.read_bytes().decode(ENCODING, ERRORS)
    except OSError as exc:
        raise CommandError(f"{path}: {exc.strerror}") from None


def new_file_mode() -> int:
    """What a new file's permissions are: 0666 less the process's umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write(path: Path, text: str) -> None:
    """The whole file at once (a crash leaves the old one or the new one, never half), its
    permissions kept; a new file's as any new file's (the temporary file's are 0600)."""
    from agent_memory_client.rule_files.section import ENCODING, ERRORS

    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else new_file_mode()
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode(ENCODING, ERRORS))
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def difference(path: Path, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{path} (as it is)",
        tofile=f"{path} (as render writes it)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def cmd_render(args: argparse.Namespace) -> int:
    from agent_memory_client.rule_files.section import SectionError, find, written

    path = Path(args.file).expanduser()
    repo = repository_of(path.absolute(), args.source_repo)
    # A link (AGENTS.md to CLAUDE.md, often) stays a link: the file it names is written.
    path = path.resolve() if path.is_symlink() else path
    if args.max_chars is not None and not MIN_CHARS <= args.max_chars <= MAX_CHARS:
        raise CommandError(f"--max-chars must be {MIN_CHARS} to {MAX_CHARS}")
    before = read(path)
    try:
        section = find(before) if before is not None else None
    except SectionError as exc:
        raise CommandError(f"{path}: {exc}") from None
    try:
        with client_of(args) as memory:
            standing = memory.standing(repo, args.max_chars)
    except ClientError as exc:
        # Exit 1 is "out of date": a failure to ask is not that.
        raise CommandError(error_line(exc)) from None
    head = CURSOR_HEAD if path.suffix == ".mdc" else ""
    after = written(before, standing["markdown"], head)
    if section is not None and section.edited and not args.force:
        print(difference(path, before or "", after), end="")
        raise CommandError(
            f"{path}: its agent-memory section was changed by hand since it was written"
            " (the difference above): change the memories instead, or --force to write it"
            " all the same",
            code=OUT_OF_DATE,
        )
    if after == before:
        say(f"{path}: up to date ({len(standing['memory_ids'])} memories of {repo})")
        return 0
    if args.check:
        print(difference(path, before or "", after), end="")
        say(f"{path}: out of date (render writes the difference above)")
        return OUT_OF_DATE
    write(path, after)
    left = f"; {standing['left_out']} left out to fit" if standing["left_out"] else ""
    say(f"{path}: wrote {len(standing['memory_ids'])} standing memories of {repo}{left}")
    return 0
