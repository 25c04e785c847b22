"""Where the files agents read are: a repository's (beside its code) and a person's own
(in their home), by the client that reads them. Each found file is named as a draft shows
it: a repository's by its path in the repository, a person's from `~`."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from agent_memory_client.clients import ADAPTERS

MAX_FILES_A_PATTERN = 50  # a folder of rules (.cursor/rules/) read at most this many files
NAME_CHARS = 200  # a draft's client_session (the server's SESSION_ID_CHARS)

# The clients' own folders whose rules are read, by client name (each adapter's Home: its
# default unless the person names another).
Homes = dict[str, Path]


@dataclass(frozen=True, slots=True)
class RuleFile:
    path: Path  # where it is read from
    name: str  # as a draft names it: "CLAUDE.md", "~/.claude/CLAUDE.md"
    source: str  # which kind of file: an adapter's RuleFiles' source


def found(root: Path, pattern: str) -> list[Path]:
    """The files `pattern` names under `root`, in order, at most MAX_FILES_A_PATTERN."""
    if "*" not in pattern:
        path = root / pattern
        return [path] if path.is_file() else []
    try:
        matched = sorted(p for p in islice(root.glob(pattern), 10 * MAX_FILES_A_PATTERN))
    except OSError:
        return []
    return [p for p in matched if p.is_file()][:MAX_FILES_A_PATTERN]


def named(path: Path) -> str:
    """A person's file as a draft names it: from `~` when it is in their home."""
    try:
        text = "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        text = path.as_posix()
    return text if len(text) <= NAME_CHARS else "…" + text[-(NAME_CHARS - 1) :]


def project_files(top: Path, homes: Homes) -> list[RuleFile]:
    """A repository's files agents read (each adapter's repository_rules), and the rules a
    client keeps for its checkout in its own folder (Home.checkout_rules: Claude Code's
    auto memory)."""
    files = [
        RuleFile(path, path.relative_to(top).as_posix(), rules.source)
        for adapter in ADAPTERS
        for rules in adapter.repository_rules
        for pattern in rules.patterns
        for path in found(top / rules.under, pattern)
        if path.name not in rules.skip
    ]
    return files + [
        RuleFile(path, named(path), rules.source)
        for adapter in ADAPTERS
        if adapter.home is not None and adapter.name in homes
        for rules in adapter.home.checkout_rules
        for folder in rules.folders(homes[adapter.name], top.resolve())
        for pattern in rules.patterns
        for path in found(folder, pattern)
    ]


def user_files(homes: Homes) -> list[RuleFile]:
    """A person's own files, which every session of theirs reads, in any repository: the
    rules each client's adapter says its folder holds (Home.rules)."""
    return [
        RuleFile(path, named(path), rules.source)
        for adapter in ADAPTERS
        if adapter.home is not None and adapter.name in homes
        for rules in adapter.home.rules
        for pattern in rules.patterns
        for path in found(homes[adapter.name] / rules.under, pattern)
        if path.name not in rules.skip
    ]
