"""Where a command line put someone else's files: a download's file, a clone's folder, a
package fetched to look at, an archive from outside unpacked."""

from __future__ import annotations

import posixpath
import re

from agent_memory_client.outside.command_line import Parsed, walk
from agent_memory_client.outside.paths import normal_path, under
from agent_memory_client.protocol import FETCH_PROGRAMS
from agent_memory_client.provenance import clone_source, gh_read, outside_urls
from agent_memory_client.shell import program_name

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from collections.abc import Iterable

# Downloaders' flags that take a value, and those that name where the download goes.
_CURL = frozenset({"-o", "-d", "-H", "-u", "-X", "-A", "-e", "-b", "-c", "-F", "-T", "-w", "-x",
                   "-r", "-m", "-E", "-K", "-U", "-z", "-C", "-Y", "-y", "-P", "-t", "-Q",
                   "--output", "--output-dir", "--data", "--data-raw", "--data-binary", "--json",
                   "--header", "--user", "--request", "--user-agent", "--referer", "--cookie",
                   "--form", "--upload-file", "--write-out", "--proxy", "--max-time", "--retry",
                   "--connect-timeout", "--url"})  # fmt: skip
_WGET = frozenset({"-O", "-P", "-o", "-a", "-U", "-t", "-T", "-e", "-i", "-l", "-A", "-R", "-D",
                   "--output-document", "--directory-prefix", "--output-file", "--user-agent",
                   "--header", "--tries", "--timeout", "--execute", "--input-file", "--level",
                   "--post-data", "--user", "--password"})  # fmt: skip
_OTHER_FETCHERS = frozenset({"-o", "-d", "-a", "--output", "--out", "--dir", "--auth", "-outfile",
                             "-uri", "-method", "-headers", "-body"})  # fmt: skip
_NAMED_OUTPUT = ("-o", "--output", "--out", "-outfile", "--output-document")
# git's and gh's flags that take a value.
_GIT = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_CLONE = frozenset({"--depth", "-b", "--branch", "-o", "--origin", "-c", "--config", "-j",
                    "--jobs", "--reference", "--reference-if-able", "--separate-git-dir",
                    "--filter", "--template", "-u", "--upload-pack", "--shallow-since",
                    "--shallow-exclude", "--server-option", "--bundle-uri"})  # fmt: skip
_GH = frozenset({"-R", "--repo", "-D", "--dir", "-O", "--output", "-p", "--pattern", "-A",
                 "--archive", "-u", "--upstream-remote-name"})  # fmt: skip
_TAR = frozenset({"-f", "-C", "-T", "-X", "-b", "-I", "--file", "--directory", "--files-from",
                  "--exclude-from", "--exclude", "--strip-components", "--transform",
                  "--use-compress-program"})  # fmt: skip
_PACKAGES = frozenset({"--pack-destination", "--registry", "-w", "--workspace", "-d", "--dest",
                       "-i", "--index-url", "-r", "--requirement", "--platform",
                       "--python-version", "--only-binary", "--no-binary"})  # fmt: skip


def landings(
    command: str, cwd: str, known: Iterable[tuple[str, str]] = ()
) -> list[tuple[str, str]]:
    """Where a command line put files from outside, each as (where they came from, the place
    they landed): a download's file, a clone's folder, a package fetched to a folder, the
    folder an archive from outside (one `known` holds, or one the line fetched) was unpacked
    into. A place only a listing of the download could name is not guessed."""
    found: list[tuple[str, str | None]] = []
    known = list(known)
    fetched = ""  # what the line fetched: `curl URL | tar -x -C DIR` unpacks it
    for words, output, here in walk(command, cwd):
        program, arguments = program_name(words[0]).lower(), words[1:]
        if program in FETCH_PROGRAMS:
            urls = outside_urls(" ".join(arguments))
            fetched = urls[0] if urls else fetched
            landed = _downloads(program, arguments, urls, here) if urls else []
            found += [(urls[0], path) for path in [*landed, output] if urls]
        elif program == "git":
            found += _cloned(arguments, here)
        elif program == "gh":
            found += _gh_landed(arguments, here)
        elif program in ("npm", "pip", "pip3"):
            found += _package(program, arguments, here)
        elif program in ("tar", "bsdtar", "unzip"):  # what came before in the line counts too
            so_far = [(path, source) for source, path in found if path]
            found += _unpacked(program, arguments, here, [*known, *so_far], fetched)
    return [(source, path) for source, path in found if path]


def _downloads(program: str, arguments: list[str], urls: list[str], here: str | None) -> list[str]:
    """The files a downloader wrote (its output flags, or the URL's own name)."""
    from urllib.parse import urlsplit

    def name_of(url: str) -> str:
        return posixpath.basename(urlsplit(url).path)

    takes = {"curl": _CURL, "wget": _WGET}.get(program, _OTHER_FETCHERS)
    parsed = Parsed(arguments, takes)
    folder = parsed.value("--output-dir", "-P", "--directory-prefix", "-d", "--dir")
    if program == "aria2c":
        names = [parsed.value("-o", "--out") or name_of(urls[0])]
    elif program == "wget":
        named = parsed.value("-O", "--output-document")
        recursive = parsed.flags & {"-r", "--recursive", "-m", "--mirror"}
        host = urlsplit(urls[0]).hostname or ""
        names = [named] if named else [host] if recursive else [name_of(urls[0]) or "index.html"]
        names = [name for name in names if name != "-"]
    else:
        names = [v for flag in _NAMED_OUTPUT for v in parsed.values.get(flag, [])]
        remote = {"-O", "--remote-name", "--remote-name-all", "--download"}
        names += [name_of(url) for url in urls] if parsed.flags & remote else []
    names = [name for name in names if name and name != "-"]
    placed = [posixpath.join(folder, name) if folder else name for name in names]
    return [path for path in (normal_path(name, here) for name in placed) if path]


def _cloned(arguments: list[str], here: str | None) -> list[tuple[str, str | None]]:
    """`git [-C DIR] clone URL [DIR]`: the folder, named by the repository by default."""
    parsed = Parsed(arguments, _GIT)
    where = here
    if parsed.value("-C"):
        where = normal_path(parsed.value("-C") or "", here)
    if parsed.operands[:1] != ["clone"]:
        return []
    at = arguments.index("clone") + 1
    cloned = Parsed(arguments[at:], _CLONE).operands
    source = clone_source(cloned[0]) if cloned else None
    if source is None:
        return []
    folder = cloned[1] if len(cloned) > 1 else _repository_folder(cloned[0])
    return [(source, normal_path(folder, where))]


def _repository_folder(address: str) -> str:
    """The folder a clone of `address` makes: its last part, `.git` left off."""
    return re.split(r"[/:]", address.rstrip("/"))[-1].removesuffix(".git")


def _gh_landed(arguments: list[str], here: str | None) -> list[tuple[str, str | None]]:
    """`gh repo clone`, `gh gist clone` (a folder), `gh release download` with a folder or a
    file named (without one it unpacks into the working folder: not guessed)."""
    source = gh_read(arguments)
    parsed = Parsed(arguments, _GH)
    words = parsed.operands
    if source is None or len(words) < 2:
        return []
    if words[1] == "clone" and len(words) > 2:
        folder = words[3] if len(words) > 3 else _repository_folder(words[2])
        return [(source, normal_path(folder, here))]
    if words[:2] == ["release", "download"]:
        named = [parsed.value("-D", "--dir"), parsed.value("-O", "--output")]
        return [(source, normal_path(path, here)) for path in named if path]
    return []


def _package(program: str, arguments: list[str], here: str | None) -> list[tuple[str, str | None]]:
    """`npm pack NAME` (its tarball, `NAME-VERSION.tgz`, or a folder named), `pip download
    NAME -d DIR`: another's package, fetched from its registry to look at."""
    parsed = Parsed(arguments, _PACKAGES)
    verb, *named = [*parsed.operands, ""]
    named = [n for n in named if n and not n.startswith((".", "/", "~", "file:"))]
    if not named or (program, verb) not in {
        ("npm", "pack"),
        ("pip", "download"),
        ("pip3", "download"),
    }:
        return []
    source = f"registry:{program} {verb} {named[0]}"
    folder = parsed.value("--pack-destination", "-d", "--dest")
    if folder:
        return [(source, normal_path(folder, here))]
    if program != "npm":
        return []  # pip's files are named by versions and platforms: not guessed
    flat = [re.sub(r"(?<=.)@.*$", "", n).lstrip("@").replace("/", "-") for n in named]
    return [(source, normal_path(f"{name}-*.tgz", here)) for name in flat]


def _unpacked(
    program: str,
    arguments: list[str],
    here: str | None,
    known: list[tuple[str, str]],
    fetched: str,
) -> list[tuple[str, str | None]]:
    """`tar -x -f ARCHIVE -C DIR`, `unzip ARCHIVE -d DIR`: the folder, when the archive came
    from outside (a remembered place, or the line's own download piped in)."""
    if program == "unzip":
        parsed = Parsed(arguments, frozenset({"-d", "-x", "-P"}))
        archive, folder = (parsed.operands or [""])[0], parsed.value("-d")
    else:
        old_style = arguments[:1] and re.fullmatch(r"[A-Za-z]+", arguments[0])
        given = [f"-{arguments[0]}", *arguments[1:]] if old_style else arguments
        parsed = Parsed(given, _TAR)
        if not parsed.flags & {"-x", "--extract", "--get"}:
            return []
        archive, folder = parsed.value("-f", "--file") or "-", parsed.value("-C", "--directory")
    if not folder:
        return []  # into the working folder, under names only the archive knows
    path = normal_path(archive, here) if archive != "-" else None
    sources = [fetched] if archive == "-" and fetched else []
    sources += [source for at, source in known if path and under(path, at)]
    return [(source, normal_path(folder, here)) for source in sources[:1]]
