"""What a command is to the fix rule: one whose failure may teach something (work, not a
probe or an inline script), one that changes something (an install, a build) rather than
looks, and a commit hook's tool that refused a commit."""

from __future__ import annotations

import re

from agent_memory_client.shell import program_name, shown, work

# Commands that only look (a run of one between a failure and its pass changes nothing);
# what only passes output along (shell.PLUMBING: `cat`, `grep`, `tail`) is no work at all.
_LOOKS = frozenset(
    {
        "ls",
        "find",
        "fd",
        "git",
        "gh",
        "which",
        "where",
        "type",
        "pwd",
        "diff",
        "stat",
        "file",
        "tree",
        "printenv",
        "ps",
        "lsof",
        "curl",
        "wget",
        "date",
        "whoami",
        "uname",
        "Get-Content",
        "Get-ChildItem",
        "Test-Path",
        "dir",
    }
)
# A command run to set things up, as a fix (`npm install`, `go generate`, `make build`).
_DOES = re.compile(
    r"\b(?:install|add|ci|sync|build|generate|gen|codegen|compile|migrate|prisma|setup|init"
    r"|bootstrap|link|rebuild|restore|download|upgrade|update|up|start|reset|seed|clean|tidy)\b"
)
_CHECKS = re.compile(r"\b(?:test|tests|lint|check|vet|fmt|format|typecheck|verify)\b")
# Commands that probe or move files: their failure is the agent looking, not a lesson.
_PROBES = _LOOKS | frozenset(
    {
        "mkdir",
        "rm",
        "cp",
        "mv",
        "touch",
        "chmod",
        "ln",
        "kill",
        "pkill",
        "open",
        "code",
        "rmdir",
        "Remove-Item",
        "New-Item",
        "Copy-Item",
        "Move-Item",
        "test",
        "[",
    }
)
# An inline script, written for the moment.
_INLINE = re.compile(r"<<-?\s*['\"]?\w+|\b(?:python3?|node|ruby|perl|bun|deno)\s+-[ce]\b|\$\(")
MAX_SEGMENTS = 3  # a command of more simple commands than this is a script
_GIT_DOES = re.compile(r"^git (?:submodule|lfs|rebase|pull|reset|read-tree|gc|remote set-url)\b")
COMMITS = frozenset({"git commit", "git push"})  # what a repository's hooks may refuse
# A hook's tools that refuse a commit or a push: one lesson per tool, whatever rule of it.
_HOOK_TOOLS = re.compile(
    r"\b(markdownlint|eslint|prettier|ruff|black|mypy|golangci-lint|commitlint|biome|vale"
    r"|stylelint|gitleaks|detect-secrets|lint-staged|husky|pre-commit|pre-push)\b"
)


def hook_tool(error: str) -> str | None:
    found = _HOOK_TOOLS.search(error) if error else None
    return f"hook:{found.group(1)}" if found else None


def doing(command: str) -> bool:
    """A command that changes something (installs, builds, generates), not one that looks."""
    for words in work(command):
        program = program_name(words[0])
        line = " ".join([program, *words[1:]])
        if program == "git":
            if _GIT_DOES.match(line):
                return True
            continue
        if program in _LOOKS:
            continue
        said = " ".join(w for w in words[1:5] if not w.startswith("-"))
        asks_help = any(w in ("--help", "-h", "help") for w in words[1:])
        if _DOES.search(said) and not _CHECKS.search(said) and not asks_help:
            return True
    return False


def tracked(command: str) -> bool:
    """A command whose failure may teach something: one that does work (a test run, a
    build, a package manager, the project's own tool), not a probe (`ls`, `cat`, `git
    status`) or an inline script written for the moment (`python -c`, a heredoc)."""
    bare = shown(command)  # a commit's message (a here-document too) left out
    if "<<" in bare or _INLINE.search(bare):
        return False
    found = work(command)
    if any(w[:2] in (["git", "commit"], ["git", "push"]) for w in found):
        return True  # a hook refused it: the project's own rules
    if not found or len(found) > MAX_SEGMENTS:
        return False
    return any(program_name(w[0]) not in _PROBES for w in found)


def named_in(path: str, output: str) -> bool:
    """The output names the file (its path's last two parts, or its name when unusual)."""
    parts = path.replace("\\", "/").split("/")
    tail = "/".join(parts[-2:])
    return tail in output or (len(parts[-1]) > 12 and parts[-1] in output)
