"""A fix's draft, or none: what a failure a pass ended teaches, as a person would keep it
(the error's real line, what changed, the command that passes), and its key, so that one
lesson is one draft however many sessions meet it."""

from __future__ import annotations

import re

from agent_memory_client.drafting.commands import COMMITS, named_in
from agent_memory_client.protocol import EVIDENCE_CHARS
from agent_memory_client.shell import environment, program_name, same_work, short, work

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import TypedDict

    from agent_memory_client.drafting.tracker import Edit, Failure, Run

    class Draft(TypedDict):
        text: str
        files: list[str]
        evidence: dict[str, str]
        key: str
        why: str  # which rule made it: "ran", "command", "edited"
        anchors: list[str]


DRAFT_FILES, DRAFT_COMMAND_CHARS, DRAFT_ERROR_CHARS = 5, 200, 300
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
# What an error's gist leaves out: numbers, paths, quoted names (one lesson, many runs).
_GIST_NOISE = re.compile(r"\d+(?:\.\d+)*|(?:[\w.-]*/)+[\w.-]+|['\"`][^'\"`]*['\"`]")


def lesson_of(failure: Failure, passed: str, anchor: str) -> Draft | None:
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
    if COMMITS & set(failure["keys"]):
        return None  # git's own refusals (a push behind its remote): no project's lesson
    if any(named_in(e["path"], failure["error"]) for e in edits):
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
    failure: Failure,
    passed: str,
    anchor: str,
    edits: list[Edit],
    runs: list[Run],
    differs: str,
    reworded: bool = False,
) -> Draft:
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


def gist(error: str) -> str:
    """An error's words, its numbers, paths and quoted names left out: the same error met
    again, in another file or run, has the same gist."""
    first = error.splitlines()[0] if error else ""
    return " ".join(_GIST_NOISE.sub(" ", first).split())[:80].lower()
