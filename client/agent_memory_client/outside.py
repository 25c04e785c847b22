"""What came from outside stays outside, within a session: provenance.py's rule across calls.

A call that puts someone else's files on disk (a clone of another's repository, a download,
a package fetched to look at, an archive unpacked from one of these) is remembered with
where the files landed and where they came from; a later read of a file under one of those
paths (a file tool's read, a search, `cat`, `grep`, `rg`, `sed` of it in the shell) is a
read of that outsider's text, its source the one they came from. So is a browser tool's
read of the page it last opened, when that page is off this machine.

One rule for the live hooks, which keep it in the session's state between hook calls
(loop.py), and for the history import, which keeps it across one transcript
(history/capture.py). Listings are not reads (`ls`, `find`, `grep -l`: names, nobody's
words), nor is a path a command line builds that cannot be known from its text alone.
"""

from __future__ import annotations

import posixpath
import re

from agent_memory_client.protocol import FETCH_PROGRAMS
from agent_memory_client.provenance import (
    SUBSTITUTION,
    clone_source,
    gh_read,
    is_local,
    outside_urls,
    outsider,
)
from agent_memory_client.shell import commands, program_name, unwrapped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from agent_memory_client.loop import Event

MAX_PATHS = 20  # places a session remembers an outsider's files landed (the newest kept)
MIN_DEPTH = 2  # folders below a root a remembered place lies, at least (`/tmp` is not one)

# Programs that print what a file holds, each with its flags that take a value (so that the
# value is no file). A pattern or a script comes first where _PATTERN_FIRST says.
_GREP = frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file",
                   "--max-count", "--include", "--exclude", "--exclude-dir"})  # fmt: skip
_READERS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("cat", "tac", "less", "more", "type"), frozenset()),
    **dict.fromkeys(("head", "tail"), frozenset({"-n", "-c", "-s"})),
    **dict.fromkeys(("grep", "egrep", "fgrep"), _GREP),
    **dict.fromkeys(("bat", "batcat"), frozenset({"-l", "-r", "-H", "--language", "--line-range"})),
    **dict.fromkeys(("awk", "gawk"), frozenset({"-f", "-v", "-F"})),
    **dict.fromkeys(("get-content", "gc"), frozenset({"-totalcount", "-tail", "-head"})),
    "rg": frozenset({"-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-M", "-j", "-r", "-E",
                     "--glob", "--iglob", "--type", "--type-not", "--max-count", "--context",
                     "--replace", "--max-depth", "--sort", "--encoding"}),
    "ag": frozenset({"-G", "-A", "-B", "-C", "-m", "--ignore", "--depth"}),
    "ack": frozenset({"-A", "-B", "-C", "-m", "--type"}),
    "sed": frozenset({"-e", "-f", "-l", "--expression", "--file"}),
    "jq": frozenset({"--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "-f"}),
    "nl": frozenset({"-b", "-s", "-w", "-v", "-i"}),
    "strings": frozenset({"-n", "-t"}),
    "xxd": frozenset({"-s", "-l", "-c", "-g"}),
    "od": frozenset({"-t", "-N", "-j", "-A"}),
    "diff": frozenset({"-U", "-C", "-x", "-X", "--label"}),
}  # fmt: skip
_PATTERN_FIRST = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "jq"}
)
_PATTERN_GIVEN = frozenset({"-e", "-f", "--regexp", "--file", "--expression"})
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
_RECURSIVE = frozenset({"-r", "-R", "--recursive"})  # grep's; rg, ag and ack always are
# A search that prints names or counts, not what the files say.
_NAMES_ONLY = frozenset({"-l", "-L", "-c", "-q", "--files-with-matches", "--count", "--quiet",
                         "--files-without-match", "--count-matches", "--silent",
                         "--files"})  # fmt: skip
_PATH_VALUES = frozenset({"-path", "-literalpath"})  # PowerShell's: the value is the file
_MOVES = frozenset({"cd", "pushd", "chdir", "set-location", "sl"})

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

# `name=value` in a command line: a literal, or a folder mktemp makes.
_ASSIGNED = re.compile(
    r"""(?:^|(?<=[\s;&|(]))(?P<name>[A-Za-z_]\w*)=(?:\$\(\s*mktemp\b(?P<mktemp>[^)]*)\)"""
    r"""|"(?P<double>[^"$`]*)"|'(?P<single>[^']*)'|(?P<bare>[^\s;&|$`"'()]+))"""
)
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
# A Windows path as the shells on Windows write it: `C:\x`, `C:/x`, Git Bash's `/c/x`, WSL's
# `/mnt/c/x` (one drive, one spelling; case-blind).
_DRIVE = re.compile(r"^(?:/mnt)?/(?P<slash>[a-zA-Z])(?=/|$)|^(?P<colon>[a-zA-Z]):(?=/|$)")
# A Windows path written with backslashes, which a POSIX reading of the line would take for
# escapes (PowerShell's `C:\x\y.txt`).
_BACKSLASHED = re.compile(r"\b[A-Za-z]:\\[^\s\"';|&]*")


class Outside:
    """What came from outside so far in one session: the places an outsider's files landed,
    each with where they came from (the newest MAX_PATHS), and the page a browser last
    opened. Kept in the hooks' state as `state()` says, read back from it as given."""

    __slots__ = ("page", "paths")

    def __init__(self, paths: object = None, page: object = None) -> None:
        given = paths if isinstance(paths, list) else []
        self.paths: list[tuple[str, str]] = [
            (str(kept[0]), str(kept[1]))
            for kept in given
            if isinstance(kept, (list, tuple)) and len(kept) == 2
        ][-MAX_PATHS:]
        self.page = page if isinstance(page, str) else ""

    def state(self) -> dict[str, Any]:
        return {"outside": [list(kept) for kept in self.paths], "page": self.page}

    def read(self, event: Event, repository: str | None) -> list[str]:
        """The outsider sources `event` read (provenance.outsider's: the project's own site
        and repository left out), remembering what it put on disk or which page it opened."""
        found: list[str] = list(event.sources) if event.kind == "fetched" else []
        command, cwd = event.command, event.cwd
        if command and event.kind in ("fetched", "ran", "failed"):
            for source, path in landings(command, cwd, self.paths):
                if outsider([source], repository) and not too_broad(path, cwd):
                    self.paths = [kept for kept in self.paths if kept[0] != path]
                    self.paths = [*self.paths, (path, source)][-MAX_PATHS:]
        if self.paths and command and event.kind in ("ran", "failed"):
            found += self.origins(shell_reads(command, cwd))
        if self.paths and (event.kind == "searched" or (event.kind == "read" and event.path)):
            found += self.origins([normal_path(event.path or ".", cwd)])
        if event.kind == "browsed" and event.path:
            self.page = event.path  # its read, if an outsider's, is the call's own source
        elif event.kind == "browsed" and self.page and not is_local(self.page):
            found.append(self.page)
        return outsider(dict.fromkeys(found), repository)

    def origins(self, paths: Iterable[str | None]) -> list[str]:
        """Where the files at `paths` came from, for those under a remembered place."""
        return [source for path in paths if path for at, source in self.paths if under(path, at)]


def normal_path(path: str, cwd: str | None) -> str | None:
    """A path as one spelling: absolute (against `cwd`), `..` resolved, a Windows drive's
    path in its one form, lower case; None where it cannot be known from the text (a
    variable, a relative path without a folder)."""
    path = path.strip().replace("\\", "/")
    if not path or "$" in path or "`" in path:
        return None
    drive = _DRIVE.match(path)
    if drive:
        path = f"{(drive.group('slash') or drive.group('colon')).lower()}:{path[drive.end() :]}"
    elif not path.startswith(("/", "~")):
        base = normal_path(cwd, None) if cwd else None
        if base is None:
            return None
        path = f"{base}/{path}"
    path = posixpath.normpath(path)
    return path.casefold() if _DRIVE.match(path) else path


def under(path: str, place: str) -> bool:
    """`path` is `place` or inside it (a `*` of a place stands for what mktemp chose)."""
    from fnmatch import fnmatchcase

    parts, ours = path.split("/"), place.split("/")
    return len(parts) >= len(ours) and all(
        a == b or ("*" in b and fnmatchcase(a, b)) for a, b in zip(parts, ours, strict=False)
    )


def too_broad(path: str, cwd: str) -> bool:
    """A place too broad to call an outsider's: a root or a folder right below one, or the
    session's own folder or one above it (an archive unpacked into the repository)."""
    parts = [part for part in path.split("/") if part]
    rooted = bool(parts) and (parts[0] == "~" or parts[0].endswith(":"))
    if len(parts) - rooted < (1 if parts[:1] == ["~"] else MIN_DEPTH):
        return True
    here = normal_path(cwd, None) if cwd else None
    return here is not None and under(here, path)


def walk(command: str, cwd: str) -> Iterator[tuple[list[str], str | None, str | None]]:
    """A command line's simple commands, each from its program on, with the file its output
    went to and the folder it ran in (`cd` followed; None once unknown); variables set in
    the line to a literal or to what mktemp makes are read."""
    flat = _BACKSLASHED.sub(lambda path: path.group(0).replace("\\", "/"), command)
    names = {
        found.group("name"): _mktemp(found.group("mktemp"))
        if found.group("mktemp") is not None
        else found.group("double") or found.group("single") or found.group("bare") or ""
        for found in _ASSIGNED.finditer(flat)
    }

    def expanded(word: str) -> str:
        return _VARIABLE.sub(lambda v: names.get(v.group(1) or v.group(2), v.group(0)), word)

    here = normal_path(cwd, None) if cwd else None
    for words, output in commands(SUBSTITUTION.sub(" ; ", flat)):
        _, words = unwrapped([expanded(word) for word in words])
        if not words:
            continue
        if program_name(words[0]).lower() in _MOVES:
            target = next((w for w in words[1:] if not w.startswith("-")), "~")
            here = normal_path(target, here) if target != "-" else None
            continue
        yield words, normal_path(expanded(output), here) if output else None, here


def _mktemp(arguments: str) -> str:
    """The folder `mktemp ARGUMENTS` makes, its random part as `*`."""
    words = arguments.split()
    folder, template = "", "tmp.XXXXXXXXXX"
    for i, word in enumerate(words):
        if word.startswith("--tmpdir="):
            folder = word.split("=", 1)[1]
        elif word.startswith("-") and not word.startswith("--"):
            folder = folder or ("/tmp" if "t" in word else "")
            if word.endswith("p") and i + 1 < len(words):
                folder = words[i + 1]
        elif word == "--tmpdir":
            folder = folder or "/tmp"
        elif i == 0 or words[i - 1] != "-p":
            template = word
    if "/" not in template and not folder and template.startswith("tmp."):
        folder = "/tmp"  # no template: in the temporary folder
    path = f"{folder}/{posixpath.basename(template)}" if folder else template
    return re.sub(r"X{3,}", "*", path)


class _Parsed:
    """A command's arguments: its flags, the values of those that take one, its operands
    (and those after `--`)."""

    __slots__ = ("flags", "operands", "rest", "values")

    def __init__(self, arguments: list[str], takes: frozenset[str]) -> None:
        self.flags: set[str] = set()
        self.values: dict[str, list[str]] = {}
        self.operands: list[str] = []
        self.rest: list[str] = []
        i = 0
        while i < len(arguments):
            word, i = arguments[i], i + 1
            if word == "--":
                self.rest = arguments[i:]
                break
            if not word.startswith("-") or word == "-":
                self.operands.append(word)
                continue
            if "=" in word and word.startswith("--"):
                flag, value = word.split("=", 1)
                self.values.setdefault(flag, []).append(value)
                continue
            lower = word.lower()  # PowerShell's flags (`-OutFile`) are case-blind
            if word in takes or word.startswith("--") or len(word) == 2:
                flag = word
            else:
                flag = lower if lower in takes or lower in _PATH_VALUES else ""
            if flag:
                self.flags.add(flag)
                if (flag in takes or flag in _PATH_VALUES) and i < len(arguments):
                    self.values.setdefault(flag, []).append(arguments[i])
                    i += 1
                continue
            for n, letter in enumerate(word[1:], start=2):  # a cluster: `-fsSLo out`
                self.flags.add(f"-{letter}")
                if f"-{letter}" in takes:
                    value = word[n:] or (arguments[i] if i < len(arguments) else "")
                    i += 0 if word[n:] else 1
                    self.values.setdefault(f"-{letter}", []).append(value)
                    break

    def value(self, *flags: str) -> str | None:
        found = [v for flag in flags for v in self.values.get(flag, [])]
        return found[-1] if found else None


def shell_reads(command: str, cwd: str) -> list[str]:
    """The files and folders whose content a command line prints (normal_path()'s): a
    reader's operands, a recursive search's folder (its own, by default)."""
    found: list[str | None] = []
    for words, _, here in walk(command, cwd):
        program = program_name(words[0]).lower()
        takes = _READERS.get(program)
        if takes is None:
            continue
        parsed = _Parsed(words[1:], takes)
        if program in _SEARCHERS and parsed.flags & _NAMES_ONLY:
            continue
        operands = parsed.operands + parsed.rest
        if program in _PATTERN_FIRST and not parsed.values.keys() & _PATTERN_GIVEN:
            operands = operands[1:]
        operands += [v for flag in _PATH_VALUES for v in parsed.values.get(flag, [])]
        searches_here = program in _SEARCHERS - {"grep", "egrep", "fgrep"}
        if not operands and (searches_here or parsed.flags & _RECURSIVE):
            operands = ["."]
        found += [normal_path(operand, here) for operand in operands]
    return [path for path in found if path]


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
    parsed = _Parsed(arguments, takes)
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
    parsed = _Parsed(arguments, _GIT)
    where = here
    if parsed.value("-C"):
        where = normal_path(parsed.value("-C") or "", here)
    if parsed.operands[:1] != ["clone"]:
        return []
    at = arguments.index("clone") + 1
    cloned = _Parsed(arguments[at:], _CLONE).operands
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
    parsed = _Parsed(arguments, _GH)
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
    parsed = _Parsed(arguments, _PACKAGES)
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
        parsed = _Parsed(arguments, frozenset({"-d", "-x", "-P"}))
        archive, folder = (parsed.operands or [""])[0], parsed.value("-d")
    else:
        old_style = arguments[:1] and re.fullmatch(r"[A-Za-z]+", arguments[0])
        given = [f"-{arguments[0]}", *arguments[1:]] if old_style else arguments
        parsed = _Parsed(given, _TAR)
        if not parsed.flags & {"-x", "--extract", "--get"}:
            return []
        archive, folder = parsed.value("-f", "--file") or "-", parsed.value("-C", "--directory")
    if not folder:
        return []  # into the working folder, under names only the archive knows
    path = normal_path(archive, here) if archive != "-" else None
    sources = [fetched] if archive == "-" and fetched else []
    sources += [source for at, source in known if path and under(path, at)]
    return [(source, normal_path(folder, here)) for source in sources[:1]]
