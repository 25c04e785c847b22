"""How a project is built, checked and changed, as its sessions show it by what ran and
passed: what a later session could not guess and would otherwise rediscover. Read over all
of a repository's sessions at once, one draft for each:

- **checks**: the project's own entry points that passed (a make, just, task or mise target,
  a package script, a workspace's script, a script of the repository), by purpose (tests,
  lint and types, build, code generation), with the folder they run from. A tool run bare
  (`go test ./...`, `pytest`) is what any agent tries first: no convention;
- **commits**: the commit messages follow Conventional Commits (`type(scope): subject`);
- **pull requests**: changes go in through pull requests from branches named alike;
- **worktrees**: work happens in separate git worktrees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent_memory_client.shell import program_name, segments, short, unwrapped

# A purpose, by the words of the target or script that serves it.
PURPOSES = (
    ("tests", re.compile(r"\b(?:test|tests|spec|e2e|integration|unit|verify|ci)\b")),
    (
        "lint and types",
        re.compile(
            r"\b(?:lint|fmt|format|typecheck|type-check|tsc|vet|clippy"
            r"|check)\b"
        ),
    ),
    ("build", re.compile(r"\b(?:build|compile|bundle|dist|package)\b")),
    ("code generation", re.compile(r"\b(?:generate|gen|codegen|migrate|migration)\b")),
)
# Task runners and package managers whose targets and scripts are the project's own.
_RUNNERS = frozenset(
    {
        "make",
        "just",
        "task",
        "mise",
        "turbo",
        "nx",
        "gradle",
        "gradlew",
        "mvn",
        "rake",
        "invoke",
        "nox",
        "tox",
        "hatch",
        "poe",
    }
)
_SCRIPTS = frozenset({"npm", "pnpm", "yarn", "bun", "deno", "composer"})
_WORKSPACE_FLAGS = ("--filter", "-F", "--workspace", "-w", "--cwd", "-C", "--prefix")
_CONVENTIONAL = re.compile(
    r"^(?:feat|fix|docs|chore|refactor|test|tests|perf|ci|build|style|revert)"
    r"(?:\([\w./-]+\))?!?: \S"
)
_INLINE = re.compile(r"\$\(|`|<<|\b(?:node|python3?|bun|deno|ruby|perl)\s+-[ce]\b")
_MESSAGE = re.compile(
    r"""(?:-m|--message)\s+(?:"(?:\$\(cat <<-?['"]?\w+['"]?\s*\n)?([^"\n]+)|'([^'\n]+))"""
)
_PATHISH = re.compile(r"^(?!-)[\w.@-]*/[\w./@-]*\.\w+$|^[\w-]+\.(?:test|spec)\.\w+$")
_CD = re.compile(r"^\s*cd\s+(?P<dir>[^\s;&|]+)\s*&&")
COMMANDS_SHOWN = 2  # of each purpose
MIN_COMMITS = 2
MOST = 0.6  # of a repository's commits seen, the share that follow the convention
MIN_SESSIONS = 2  # a habit is seen in more than one session
WORKSPACE_CHARS = 60


@dataclass
class Convention:
    text: str
    evidence: dict[str, str]
    key: str
    anchors: list[str]
    why: str


@dataclass
class _Seen:
    counts: dict[str, int] = field(default_factory=dict)
    anchors: list[str] = field(default_factory=list)

    def add(self, what: str, anchor: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        if anchor not in self.anchors:
            self.anchors.append(anchor)

    def most(self, count: int) -> list[str]:
        return sorted(self.counts, key=lambda c: -self.counts[c])[:count]


def entry_point(words: list[str]) -> tuple[str, str] | None:
    """(purpose, the command as the project's entry point) of a simple command, or None
    for what any agent would run bare."""
    program = program_name(words[0])
    args = [w for w in words[1:] if not w.startswith("-")]
    if program in _RUNNERS:
        target = " ".join(args[:2]) or "(default)"
    elif program in _SCRIPTS:
        named = _workspace(words)
        rest = [a for a in args if a != named]
        if rest[:1] in (["run"], ["run-script"]) and len(rest) > 1:
            target = rest[1]
        elif rest[:1] in (["test"], ["t"], ["build"], ["lint"], ["typecheck"]) or (named and rest):
            target = rest[0]
        else:
            return None
    elif words[0].startswith(("./", "scripts/", "bin/")) and "/" in words[0]:
        target = program
    else:
        return None
    for purpose, words_of in PURPOSES:
        if words_of.search(re.sub(r"[:_.-]", " ", target)):
            shown = [_PATHISH.sub("<path>", w) for w in words[: _shown_words(words)]]
            return purpose, " ".join(shown)
    return None


def _workspace(words: list[str]) -> str | None:
    for i, word in enumerate(words[:-1]):
        if word in _WORKSPACE_FLAGS:
            return words[i + 1][:WORKSPACE_CHARS]
    return None


def _shown_words(words: list[str]) -> int:
    """How many words name the entry point: the program, its flags' values, the script."""
    count, seen = 1, 0
    while count < len(words) and seen < 2:
        if words[count] == "--":  # what follows goes to the tool: this run's, not the project's
            break
        if words[count] in _WORKSPACE_FLAGS:
            count += 2
            continue
        if not words[count].startswith("-"):
            seen += 1
        count += 1
    return count


class Conventions:
    """A repository's sessions' commands, read for its conventions."""

    def __init__(self) -> None:
        self.checks: dict[str, _Seen] = {}
        self.commits = _Seen()
        self.pulls = _Seen()
        self.branches = _Seen()
        self.worktrees = _Seen()
        self.worktree_sessions: set[str] = set()
        self.other_commits = 0  # commit messages that follow no convention

    def ran(self, command: str, anchor: str, cwd: str = "", session: str = "") -> None:
        """A command that passed, in `session` whose folder is `cwd`."""
        folder = _CD.match(command)
        where = _inside(folder.group("dir"), cwd) if folder else ""
        if where is None:
            return  # run in another folder: another project's, maybe
        for words in segments(command):
            _, words = unwrapped(words)
            if not words:
                continue
            program = program_name(words[0])
            if program == "git":
                self._git(words, command, anchor, session)
            elif program == "gh" and words[1:3] == ["pr", "create"]:
                self.pulls.add(_flag(words, "--base") or "main", anchor)
            elif program == "workmux" and words[1:2] == ["add"]:
                self.worktrees.add("workmux add", anchor)
                self.worktree_sessions.add(session)
            elif not _INLINE.search(command):
                found = entry_point(words)
                if found is not None:
                    purpose, shown = found
                    shown = f"cd {where} && {shown}" if where and where != "." else shown
                    self.checks.setdefault(purpose, _Seen()).add(short(shown, 100), anchor)

    def _git(self, words: list[str], command: str, anchor: str, session: str) -> None:
        verb = next((w for w in words[1:] if not w.startswith("-")), "")
        if verb == "commit":
            message = _MESSAGE.search(command)
            subject = (message.group(1) or message.group(2) or "").strip() if message else ""
            if _CONVENTIONAL.match(subject):
                self.commits.add(short(subject, 72), anchor)
            elif subject:
                self.other_commits += 1
        elif (verb in ("checkout", "switch") and any(f in words for f in ("-b", "-c", "-B"))) or (
            verb == "push" and any(f in words for f in ("-u", "--set-upstream"))
        ):
            self.branches.add(words[-1], anchor)
        elif verb == "worktree" and "add" in words:
            base = words[-1] if len(words) > 4 and not words[-1].startswith("-") else ""
            self.worktrees.add(f"git worktree add … {base}".strip(), anchor)
            self.worktree_sessions.add(session)

    def drafts(self, repo: str) -> list[Convention]:
        where = f"In {repo}" if repo else "Here"
        found = []
        if self.checks:
            parts = [
                f"{purpose}: "
                + ", ".join(f"`{c}`" for c in self.checks[purpose].most(COMMANDS_SHOWN))
                for purpose, _ in PURPOSES
                if purpose in self.checks
            ]
            anchors = [a for seen in self.checks.values() for a in seen.anchors]
            shown = "\n".join(c for seen in self.checks.values() for c in seen.most(COMMANDS_SHOWN))
            found.append(
                Convention(
                    f"{where}, the project's own commands check the work ("
                    + "; ".join(parts)
                    + ").",
                    {"shown": shown},
                    "convention|checks",
                    anchors[-20:],
                    "checks",
                )
            )
        conventional = sum(self.commits.counts.values())
        if conventional >= MIN_COMMITS and conventional >= MOST * (
            conventional + self.other_commits
        ):
            seen = self.commits.most(COMMANDS_SHOWN)
            found.append(
                Convention(
                    f"{where}, commit messages follow Conventional Commits, `type(scope): subject`"
                    f" (as in `{seen[0]}`).",
                    {"shown": "\n".join(seen)},
                    "convention|commits",
                    self.commits.anchors[-10:],
                    "commits",
                )
            )
        if self.pulls.counts:
            branches = self.branches.most(COMMANDS_SHOWN)
            named = f" from a branch such as `{branches[0]}`" if branches else " from a branch"
            found.append(
                Convention(
                    f"{where}, changes go in through a pull request{named}, opened with"
                    f" `gh pr create` against `{self.pulls.most(1)[0]}`.",
                    {"shown": "\n".join(["gh pr create", *branches])},
                    "convention|pulls",
                    [*self.pulls.anchors, *self.branches.anchors][-10:],
                    "pulls",
                )
            )
        if len(self.worktree_sessions) >= MIN_SESSIONS:  # a habit, not one time
            found.append(
                Convention(
                    f"{where}, work happens in a git worktree of its own"
                    f" (`{self.worktrees.most(1)[0]}`), not in the main checkout.",
                    {"shown": "\n".join(self.worktrees.most(2))},
                    "convention|worktrees",
                    self.worktrees.anchors[-10:],
                    "worktrees",
                )
            )
        return found


def _inside(folder: str, cwd: str) -> str | None:
    """A `cd` target as the session's folder names it ("" for a folder itself, "website"
    for one under it); None for a folder elsewhere."""
    if not re.match(r"^(?:[/~$]|[A-Za-z]:)", folder):
        return folder.rstrip("/")
    if not cwd:
        return None
    target, base = (p.replace("\\", "/").rstrip("/").lower() for p in (folder, cwd))
    if re.match(r"^/[a-z]/", target):  # Git Bash's /d/x is D:/x
        target = f"{target[1]}:{target[2:]}"
    if target == base:
        return ""
    return (
        folder.replace("\\", "/").rstrip("/")[len(base) + 1 :]
        if target.startswith(base + "/")
        else None
    )


def _flag(words: list[str], name: str) -> str | None:
    for i, word in enumerate(words[:-1]):
        if word == name:
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None
