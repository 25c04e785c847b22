"""Where the files agents read are: a repository's (beside its code) and a person's own
(in their home), by the client that reads them. Each found file is named as a draft shows
it: a repository's by its path in the repository, a person's from `~`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

MAX_FILES_A_PATTERN = 50  # a folder of rules (.cursor/rules/) read at most this many files
NAME_CHARS = 200  # a draft's client_session (the server's SESSION_ID_CHARS)

# A repository's own, by the client whose file it is: (source, patterns under its top).
PROJECT_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("CLAUDE.md", ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules/**/*.md")),
    ("AGENTS.md", ("AGENTS.md", "AGENTS.override.md")),
    ("GEMINI.md", ("GEMINI.md",)),
    ("Cursor rules", (".cursor/rules/**/*.mdc", ".cursorrules")),
    (
        "Copilot instructions",
        (".github/copilot-instructions.md", ".github/instructions/**/*.instructions.md"),
    ),
)
AUTO_MEMORY = "Claude Code auto memory"  # ~/.claude/projects/<its folder>/memory/*.md
CODEX_MEMORIES = "Codex memories"  # ~/.codex/memories/*.md
# Codex's own working files there: the raw notes its MEMORY.md is consolidated from.
CODEX_NOT_MEMORIES = frozenset({"raw_memories.md"})


@dataclass(frozen=True, slots=True)
class Homes:
    """The clients' own folders (each its default unless the person names another)."""

    claude: Path
    codex: Path
    gemini: Path

    @classmethod
    def default(cls) -> Homes:
        home = Path.home()
        codex = os.environ.get("CODEX_HOME")
        return cls(home / ".claude", Path(codex) if codex else home / ".codex", home / ".gemini")


@dataclass(frozen=True, slots=True)
class RuleFile:
    path: Path  # where it is read from
    name: str  # as a draft names it: "CLAUDE.md", "~/.claude/CLAUDE.md"
    source: str  # which kind of file: PROJECT_FILES' names, AUTO_MEMORY, ...


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


def project_folder(top: Path) -> str:
    """Claude Code's folder for a checkout under ~/.claude/projects: the path with every
    character but a letter or a digit a dash (as its 2.1 releases name it)."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(top))


def project_files(top: Path, homes: Homes) -> list[RuleFile]:
    """A repository's files agents read, and Claude Code's auto memory of its checkout."""
    files = [
        RuleFile(path, path.relative_to(top).as_posix(), source)
        for source, patterns in PROJECT_FILES
        for pattern in patterns
        for path in found(top, pattern)
    ]
    folder = project_folder(top.resolve())
    # A long path's folder is cut at 200 characters and given a hash: any folder so cut.
    projects = homes.claude / "projects"
    memory_dirs = [projects / folder / "memory"]
    if len(folder) > 200 and projects.is_dir():
        memory_dirs = sorted(p / "memory" for p in projects.glob(f"{folder[:200]}-*"))
    for memory in memory_dirs:
        files += [RuleFile(p, named(p), AUTO_MEMORY) for p in found(memory, "*.md")]
    return files


def user_files(homes: Homes) -> list[RuleFile]:
    """A person's own files, which every session of theirs reads, in any repository."""
    wanted = [
        ("CLAUDE.md", homes.claude, ("CLAUDE.md", "rules/**/*.md")),
        ("AGENTS.md", homes.codex, ("AGENTS.md", "AGENTS.override.md")),
        (CODEX_MEMORIES, homes.codex / "memories", ("*.md",)),
        ("GEMINI.md", homes.gemini, ("GEMINI.md",)),
    ]
    return [
        RuleFile(path, named(path), source)
        for source, root, patterns in wanted
        for pattern in patterns
        for path in found(root, pattern)
        if not (source == CODEX_MEMORIES and path.name in CODEX_NOT_MEMORIES)
    ]
