"""The files a shell command line prints the content of: a reader's operands (`cat`,
`sed`, `jq`, PowerShell's `Get-Content`), a recursive search's folder."""

from __future__ import annotations

from agent_memory_client.outside.command_line import PATH_VALUES, Parsed, walk
from agent_memory_client.outside.paths import normal_path
from agent_memory_client.shell import program_name

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


def shell_reads(command: str, cwd: str) -> list[str]:
    """The files and folders whose content a command line prints (normal_path()'s): a
    reader's operands, a recursive search's folder (its own, by default)."""
    found: list[str | None] = []
    for words, _, here in walk(command, cwd):
        program = program_name(words[0]).lower()
        takes = _READERS.get(program)
        if takes is None:
            continue
        parsed = Parsed(words[1:], takes)
        if program in _SEARCHERS and parsed.flags & _NAMES_ONLY:
            continue
        operands = parsed.operands + parsed.rest
        if program in _PATTERN_FIRST and not parsed.values.keys() & _PATTERN_GIVEN:
            operands = operands[1:]
        operands += [v for flag in PATH_VALUES for v in parsed.values.get(flag, [])]
        searches_here = program in _SEARCHERS - {"grep", "egrep", "fgrep"}
        if not operands and (searches_here or parsed.flags & _RECURSIVE):
            operands = ["."]
        found += [normal_path(operand, here) for operand in operands]
    return [path for path in found if path]
