"""The fix rule, once for the live hooks (loop.py) and for past sessions (history/): one
tracker, fed the session's moments in order, drafts what a person would keep of a failure.

A **fix** is a command that failed with a real error (shell.py reads it: through pipes, in
any client's shell tool; a cancelled call is none), then something changed, then the same
work passed. What changed is one of:

- a command run in between that did something (an install, a build of a dependency, a
  code generator, a migration): the fix was made by running it;
- the command itself: it passes with an environment variable, a flag or another
  program's path that it failed without;
- files edited.

**Not a lesson** (the task itself, not something a later session could meet again): a fix
made only by editing files this session had already been writing before the failure, or
whose error names one of them (a compile or test error in the code being written); a retry
that passed with nothing changed; a formatter's or linter's run.

The draft names the error (its real line, not a runner's summary), what changed (files,
and the change itself when short, or the command run) and the command that passes. Its
key is the failing work and the error's gist, so that one lesson is one draft however
many sessions meet it.

The tracker's state is a plain dict: the hooks keep it in a session's state file between
processes.
"""

from __future__ import annotations

import os
import re

from agent_memory_client.protocol import EVIDENCE_CHARS
from agent_memory_client.shell import (
    environment,
    error_lines,
    keys,
    last_lines,
    program_name,
    same_work,
    short,
    shown,
    work,
)

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Tracker", "error_query"]

DRAFT_FILES, DRAFT_COMMAND_CHARS, DRAFT_ERROR_CHARS = 5, 200, 300
CHANGE_CHARS = 400  # of an edit's change, what a draft shows (each client's adapter cuts it)
OPEN_FAILURES = 4  # failures a session waits on at once (the newest)
RUNS_KEPT = 4  # commands run between a failure and its pass, remembered for the draft
TOUCHED_KEPT = 300  # files a session has edited, remembered
# Formatters and linters: what a change fixed there is rarely a lesson for a later session.
NO_LESSON = frozenset(
    {
        "ruff",
        "black",
        "isort",
        "prettier",
        "eslint",
        "gofmt",
        "rustfmt",
        "biome",
        "golangci-lint",
        "markdownlint",
        "oxlint",
        "stylelint",
    }
)
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
# An error that says the command itself was wrong: a flag, an argument, the shell's syntax.
_USAGE = re.compile(
    r"unknown (?:flag|option|command|argument|shorthand)|unrecognized (?:argument|option)s?"
    r"|invalid (?:option|argument|choice)|unexpected argument|no such (?:option|command)"
    r"|\bUsage: |syntax error|ParserError|is not (?:a valid statement separator|recognized)"
    r"|requires (?:an|at least) \w* ?arguments?|accepts \d+ arg",
    re.IGNORECASE,
)
# An error of the machine, not of the code: a missing program or module, a service down, a
# permission, a version, a timeout.
_ENVIRONMENT = re.compile(
    r"command not found|not recognized as|No such file or directory|cannot find module"
    r"|Cannot find module|ModuleNotFoundError|No module named|ECONNREFUSED|connection refused"
    r"|permission denied|EACCES|EADDRINUSE|address already in use|timed? ?out|version|not installed"
    r"|ENOENT|index\.lock|lock file|unable to access|certificate|rate limit|out of memory"
    r"|PermissionError|\[Errno 13\]|relation \S+ does not exist|no such table"
    r"|database \S+ does not exist",
    re.IGNORECASE,
)
# An error in the code itself: a compiler's, a type checker's, a failed assertion.
_CODE_ERROR = re.compile(
    r"\berror TS\d+|\bundefined: |\bcannot find symbol|\bSyntaxError\b|\bTypeError\b"
    r"|\bAssertionError\b|\bexpect\(|\bassert(?:ion)?\b|--- FAIL|\bExpected\b.*\bReceived\b"
    r"|\bmismatched types\b|\berror\[E\d+\]|\bis not assignable\b|\bhas no attribute\b"
    r"|\bimported and not used\b|\bdeclared and not used\b",
    re.IGNORECASE,
)
# A file that sets the project up rather than being its code: an edit there is a lesson.
_SETUP_FILE = re.compile(
    r"(?:^|/)(?:package\.json|tsconfig[\w.-]*\.json|[\w.-]+\.(?:toml|ya?ml|ini|cfg|lock|mod)"
    r"|Makefile|Dockerfile|\.env[\w.-]*|requirements[\w.-]*\.txt|\.gitignore|\.npmrc|\.nvmrc"
    r"|[\w-]+\.config\.[cm]?[jt]s|\.[\w-]+rc(?:\.json|\.js)?|go\.mod|Cargo\.toml|justfile"
    r"|mise\.toml|\.tool-versions)$"
)
_GIT_DOES = re.compile(r"^git (?:submodule|lfs|rebase|pull|reset|read-tree|gc|remote set-url)\b")
# What an error's gist leaves out: numbers, paths, quoted names (one lesson, many runs).
_GIST_NOISE = re.compile(r"\d+(?:\.\d+)*|(?:[\w.-]*/)+[\w.-]+|['\"`][^'\"`]*['\"`]")


def error_query(output: str) -> str:
    """What of a failed command's output stands for it in a recall: its error lines, else
    its last lines."""
    return error_lines(output) or last_lines(output)


class Tracker:
    """A session's failures awaiting their fix, and the files it has been writing."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.open: list[dict[str, Any]] = list(state.get("open") or [])
        self.touched: list[str] = list(state.get("touched") or [])
        # Every failure a pass ended, lesson or not (the history import's candidates for a
        # person's own agent to judge, history/distill.py); not kept between hooks.
        self.ended: list[tuple[dict[str, Any], str, str]] = []

    def state(self) -> dict[str, Any]:
        return {"open": self.open, "touched": self.touched[-TOUCHED_KEPT:]}

    def failed(self, command: str, output: str, anchor: str = "") -> None:
        """A command failed: it waits for its fix (a failure of the same work again keeps
        the first's error and anchor, and notes this one's)."""
        wanted = keys(command)
        if not wanted or not tracked(command):
            return
        for failure in self.open:
            if failure["keys"] == list(wanted):
                failure["anchors"] = [*failure["anchors"], anchor][-RUNS_KEPT:]
                failure["command"] = shown(command)[:DRAFT_COMMAND_CHARS]
                return
        error = error_lines(output)
        self.open = [
            *self.open,
            {
                "command": shown(command)[:DRAFT_COMMAND_CHARS],
                "keys": list(wanted),
                "error": error,
                "tail": "" if error else last_lines(output, 3, DRAFT_ERROR_CHARS),
                "anchors": [anchor],
                "edits": [],
                "runs": [],
                "hook": hook_tool(output) if _COMMITS & set(wanted) else None,
                "before": [p for p in self.touched if _named_in(p, output)][:DRAFT_FILES],
            },
        ][-OPEN_FAILURES:]

    def edited(self, path: str, change: str = "", anchor: str = "") -> None:
        """A file changed: noted for each failure that waits, and as the session's own."""
        if not path:
            return
        for failure in self.open:
            new = not any(e["path"] == path for e in failure["edits"])
            if new and len(failure["edits"]) < DRAFT_FILES:
                # `own`: a file the session had written before (the code it is writing)
                own = path in self.touched
                failure["edits"].append(
                    {"path": path, "change": change[:CHANGE_CHARS], "anchor": anchor,
                     "own": own}
                )  # fmt: skip
        if path not in self.touched:
            self.touched.append(path)

    def ran(self, command: str, anchor: str = "") -> dict[str, Any] | None:
        """A command passed: the draft of the failure it ends, if that is a lesson; or a
        step noted for the failures that wait."""
        done = set(keys(command))
        for failure in self.open:
            if set(failure["keys"]) <= done:  # the same work (shell.same_work), by its keys
                self.open = [f for f in self.open if f is not failure]
                self.ended.append((failure, shown(command), anchor))
                return lesson_of(failure, shown(command), anchor)
        if doing(command):
            for failure in self.open:
                failure["runs"] = [
                    *failure["runs"],
                    {"command": shown(command)[:DRAFT_COMMAND_CHARS], "anchor": anchor},
                ][-RUNS_KEPT:]
        return None


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


def _named_in(path: str, output: str) -> bool:
    """The output names the file (its path's last two parts, or its name when unusual)."""
    parts = path.replace("\\", "/").split("/")
    tail = "/".join(parts[-2:])
    return tail in output or (len(parts[-1]) > 12 and parts[-1] in output)


def lesson_of(failure: dict[str, Any], passed: str, anchor: str) -> dict[str, Any] | None:
    """The draft of a failure that `passed` ended, or None when it is no lesson: nothing
    changed, the linter's, or the code being written's own error."""
    program = program_name(passed.split()[0]) if passed.split() else ""
    if program in NO_LESSON or any(program_name(w[0]) in NO_LESSON for w in work(passed)):
        return None
    edits = failure["edits"]
    programs = {program_name(w[0]) for w in work(failure["command"])}
    runs = [
        r
        for r in failure["runs"]
        if not same_work(r["command"], passed)  # not itself
        and concerns(r["command"], programs, failure["error"])
    ]
    differs = _difference(failure["command"], passed)
    written = [e for e in edits if e.get("own")]
    if not (edits or runs or differs):
        return None  # a retry that passed with nothing changed
    if not failure["error"]:
        return None  # no line of its output reads as the error: nothing to learn from
    if _USAGE.search(failure["error"]) and _reworded(failure["command"], passed):
        return _draft(failure, passed, anchor, [], [], "", reworded=True)
    if failure.get("hook"):  # a commit hook's tool refused it: the project's own rule
        return _draft(failure, passed, anchor, edits, runs, differs)
    if _COMMITS & set(failure["keys"]):
        return None  # git's own refusals (a push behind its remote): no project's lesson
    if any(_named_in(e["path"], failure["error"]) for e in edits):
        runs, differs = [], ""  # the error named the file that changed: the edit fixed it
    if not (runs or differs) and (failure["before"] or (edits and len(written) == len(edits))):
        return None  # the code being written: its own compile or test error
    setup = any(_SETUP_FILE.search(e["path"]) for e in edits)
    environment = _ENVIRONMENT.search(failure["error"])
    if _CODE_ERROR.search(failure["error"]) and not (setup or environment):
        return None  # a compile, type or assertion error: the code's, whatever ran between
    if not (runs or differs or setup) and not environment:
        return None  # a code edit fixing a code error: the task, not a lesson
    return _draft(failure, passed, anchor, edits, runs, differs)


def concerns(command: str, programs: set[str], error: str) -> bool:
    """A command run between a failure and its pass may have fixed it: one of the same
    program (`pnpm install` for `pnpm build`), git's own, or one that names what the error
    names (a package, a path); not another project's build in another folder."""
    for words in work(command):
        program = program_name(words[0])
        if program in programs or program == "git":
            return True
        if any(len(w) > 3 and w in error for w in words[1:] if not w.startswith("-")):
            return True
    return False


def _reworded(failed: str, passed: str) -> bool:
    return " ".join(failed.split()) != " ".join(passed.split())


def _difference(failed: str, passed: str) -> str:
    """What the passing command has that the failing one lacked: an environment variable,
    another program's path (`CGO_ENABLED=0`, `./node_modules/.bin/vitest`). Flags are left
    out: a rerun's `-v` or `-x` is how the agent looked, not what fixed it."""
    added = [v for v in environment(passed) if v not in environment(failed)]
    failed_programs = {w[0] for w in work(failed)}
    programs = [w[0] for w in work(passed) if w[0] not in failed_programs and "/" in w[0]]
    return " ".join([*added, *programs])


def _draft(
    failure: dict[str, Any],
    passed: str,
    anchor: str,
    edits: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    differs: str,
    reworded: bool = False,
) -> dict[str, Any]:
    error = failure["error"] or failure["tail"] or "an error"
    first_line = short(error.splitlines()[0], DRAFT_ERROR_CHARS)
    if reworded:  # the command was wrong, not the code: how it is written to work
        return {
            "text": f"`{short(failure['command'], DRAFT_COMMAND_CHARS)}` fails with:"
            f" {first_line}. Written as `{short(passed, DRAFT_COMMAND_CHARS)}`, it works.",
            "files": [],
            "evidence": {
                "error": error[:EVIDENCE_CHARS],
                "failed": failure["command"],
                "change": f"the command, written as {passed}"[:EVIDENCE_CHARS],
                "command": passed[:DRAFT_COMMAND_CHARS],
            },
            "key": "fix|" + "+".join(failure["keys"]) + "|" + gist(error),
            "why": "command",
            "anchors": [*failure["anchors"], anchor],
        }
    files = [e["path"] for e in edits][:DRAFT_FILES]
    ways = []
    if runs:
        ways.append("running " + " then ".join(f"`{short(r['command'], 120)}`" for r in runs))
    if differs:
        ways.append(f"running it with `{short(differs, 120)}`")
    if files:
        shown = next((e["change"] for e in edits if e["change"]), "") if len(files) == 1 else ""
        ways.append(f"changing {', '.join(files)}" + (f" ({short(shown, 160)})" if shown else ""))
    text = (
        f"`{short(failure['command'], DRAFT_COMMAND_CHARS)}` failed with: {first_line}."
        f" Fixed by {' and '.join(ways)}; `{short(passed, DRAFT_COMMAND_CHARS)}` passes."
    )
    change = "; ".join(
        [
            *(f"ran `{r['command']}`" for r in runs),
            *([f"ran it with {differs}"] if differs else []),
            *(f"{e['path']}" + (f"\n{e['change']}" if e["change"] else "") for e in edits),
        ]
    )
    return {
        "text": text,
        "files": files,
        "evidence": {
            "error": error[:EVIDENCE_CHARS],
            "failed": failure["command"],
            "change": change[:EVIDENCE_CHARS],
            "command": passed[:DRAFT_COMMAND_CHARS],
        },
        "key": "fix|" + "+".join(failure["keys"]) + "|" + (failure.get("hook") or gist(error)),
        "why": "ran" if runs else "command" if differs else "edited",
        "anchors": [
            *failure["anchors"],
            *(e["anchor"] for e in edits),
            *(r["anchor"] for r in runs),
            anchor,
        ],
    }


_COMMITS = frozenset({"git commit", "git push"})  # what a repository's hooks may refuse
# A hook's tools that refuse a commit or a push: one lesson per tool, whatever rule of it.
_HOOK_TOOLS = re.compile(
    r"\b(markdownlint|eslint|prettier|ruff|black|mypy|golangci-lint|commitlint|biome|vale"
    r"|stylelint|gitleaks|detect-secrets|lint-staged|husky|pre-commit|pre-push)\b"
)


def hook_tool(error: str) -> str | None:
    found = _HOOK_TOOLS.search(error) if error else None
    return f"hook:{found.group(1)}" if found else None


def gist(error: str) -> str:
    """An error's words, its numbers, paths and quoted names left out: the same error met
    again, in another file or run, has the same gist."""
    first = error.splitlines()[0] if error else ""
    return " ".join(_GIST_NOISE.sub(" ", first).split())[:80].lower()


def relative_path(path: str, cwd: str, top: str | None) -> str | None:
    """A file as the repository names it (relative to its top folder, else the session's
    folder); None for one outside it."""
    if not path:
        return None
    windows = "\\" in path or "\\" in cwd
    sep_path = path.replace("\\", "/") if windows else path
    sep_cwd = cwd.replace("\\", "/") if windows else cwd
    absolute = sep_path.startswith("/") or bool(re.match(r"^[A-Za-z]:/", sep_path))
    full = os.path.normpath(
        sep_path if absolute or not sep_cwd else os.path.join(sep_cwd, sep_path)
    )
    base = (top or sep_cwd).replace("\\", "/") if (top or sep_cwd) else ""
    if not base:
        return sep_path
    if windows:
        full = full.replace("\\", "/")
        if full.lower().startswith(base.lower().rstrip("/") + "/"):
            return full[len(base.rstrip("/")) + 1 :]
        return None
    found = os.path.relpath(full, base)
    return None if found.startswith("..") else found
