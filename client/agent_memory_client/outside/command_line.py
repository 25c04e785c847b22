"""A command line as outside/ reads it: its simple commands with the file each wrote and the
folder each ran in (`cd` followed, variables set in the line read), and a command's
arguments told apart (flags, their values, operands)."""

from __future__ import annotations

import posixpath
import re

from agent_memory_client.outside.paths import normal_path
from agent_memory_client.provenance import SUBSTITUTION
from agent_memory_client.shell import commands, program_name, unwrapped

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from collections.abc import Iterator

PATH_VALUES = frozenset({"-path", "-literalpath"})  # PowerShell's: the value is the file
_MOVES = frozenset({"cd", "pushd", "chdir", "set-location", "sl"})
# `name=value` in a command line: a literal, or a folder mktemp makes.
_ASSIGNED = re.compile(
    r"""(?:^|(?<=[\s;&|(]))(?P<name>[A-Za-z_]\w*)=(?:\$\(\s*mktemp\b(?P<mktemp>[^)]*)\)"""
    r"""|"(?P<double>[^"$`]*)"|'(?P<single>[^']*)'|(?P<bare>[^\s;&|$`"'()]+))"""
)
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
# A Windows path written with backslashes, which a POSIX reading of the line would take for
# escapes (PowerShell's `C:\x\y.txt`).
_BACKSLASHED = re.compile(r"\b[A-Za-z]:\\[^\s\"';|&]*")


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


class Parsed:
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
                flag = lower if lower in takes or lower in PATH_VALUES else ""
            if flag:
                self.flags.add(flag)
                if (flag in takes or flag in PATH_VALUES) and i < len(arguments):
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
