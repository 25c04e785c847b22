"""A shell command and its output as the shell saw them, once for every client: which
command it was (through pipes, redirects, `cd` and environment prefixes), whether it
failed (an exit status in the text, a failure a pipe into `tail` hid, a call the client
cancelled), and which of its lines is the real error (not a runner's summary).

The live hooks (clients/) and the history import (history/) read every shell result
through these, and drafting.py's rule works on what they say.
"""

from __future__ import annotations

import re

OUTPUT_HEAD, OUTPUT_TAIL = 4_096, 12_288  # what of an output is kept to read it
ERROR_CHARS = 300  # one error line, at most
ERROR_LINES = 3

# A call the client cancelled or the user refused: not a failure of the command.
_CANCELLED = re.compile(
    r"Sibling tool call errored|The user doesn't want to proceed|user doesn't want to take"
    r"|\[Request interrupted by user|Interrupted by user|tool use was rejected"
    r"|Command (?:was )?(?:cancelled|canceled|aborted)|operation was aborted by the user"
    r"|Request cancelled|Tool execution cancelled",
    re.IGNORECASE,
)
# A command that had not ended when the client answered, its note after what it printed so
# far (Copilot CLI: `<command started in background with shellId: 0>`, `<command with
# shellId: 0 is still running after 30 seconds. ...>`): no outcome yet either.
_UNFINISHED = re.compile(r"<command (?:started in background|with shellId: \d+ is still running)")
# An exit status as clients write it into a result's text: Codex ("Process exited with
# code 1", "Exit code: 1"), Gemini CLI ("Exit Code: 1"), Copilot CLI ("<shellId: 3
# completed with exit code 1>"), and runners' own words.
_EXIT = re.compile(
    r"(?:Process exited with code|Exit [Cc]ode:|completed with exit code|exited with code"
    r"|Command exited with code|exit status)\s*(-?\d+)"
)
# Programs that only pass output along: a pipe into one hides the status of what fed it.
FILTERS = frozenset(
    {
        "tail",
        "head",
        "grep",
        "egrep",
        "rg",
        "sed",
        "awk",
        "tee",
        "cat",
        "less",
        "more",
        "sort",
        "uniq",
        "cut",
        "wc",
        "tr",
        "column",
        "jq",
        "Select-Object",
        "Select-String",
        "Out-String",
    }
)
# Commands around the work, never the work: moving about, setting up, printing.
PLUMBING = FILTERS | frozenset(
    {
        "cd",
        "pushd",
        "popd",
        "export",
        "source",
        ".",
        "set",
        "unset",
        "echo",
        "printf",
        "true",
        "false",
        "sleep",
        "clear",
        "exit",
        "wait",
        "Set-Location",
        "Write-Host",
        "Write-Output",
    }
)
# Wrappers whose next word is the program: `npx vitest` is vitest, `uv run pytest` pytest.
_RUNS = {
    "npx": 1,
    "bunx": 1,
    "pnpx": 1,
    "dlx": 1,
    "exec": 1,
    "time": 1,
    "nohup": 1,
    "sudo": 1,
    "command": 1,
    "env": 1,
}
_RUNS_TWO = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "dlx"),
    ("bun", "x"),
    ("pipenv", "run"),
    ("hatch", "run"),
    ("pdm", "run"),
    ("rye", "run"),
    ("npm", "exec"),
}
# Flags that take the next word as their value (so that it is no argument).
_VALUE_FLAGS = frozenset(
    {
        "-k",
        "-m",
        "-t",
        "-n",
        "-p",
        "-C",
        "-c",
        "-o",
        "-f",
        "-e",
        "-r",
        "-g",
        "-w",
        "-x",
        "--filter",
        "--project",
        "--workspace",
        "--run",
        "-run",
        "--grep",
        "--config",
        "--reporter",
        "--testNamePattern",
        "--timeout",
        "-timeout",
        "--maxfail",
        "--tags",
        "-tags",
        "--target",
        "--package",
        "--manifest-path",
        "--features",
        "--bin",
        "--example",
    }
)
KEY_WORDS = 3  # a command's program and its first arguments name what it does

# A line that is a runner's summary or its own framing, never the error itself.
_SUMMARY = re.compile(
    r"^(?:Ran \d+ tests?|Tests?:|Test Files|Test Suites:|Snapshots:|Time:|Duration|Start at"
    r"|\d+ (?:passed|failed|pass|fail|tests?|errors?)\b|=+ .*(?:passed|failed|error).* =+$"
    r"|FAILED \(|FAIL\s*$|ok\s|PASS\b|exit status \d|Process exited|Exit [Cc]ode"
    r"|Chunk ID|Wall time|Original token count|Output:$|Command:|Directory:|Signal:"
    r"|Background PIDs|Process Group|error: script \"|error: Recipe|npm ERR! (?:code|path|errno"
    r"|command|A complete log|Lifecycle|Failed at)|ELIFECYCLE|ERR_PNPM_RECURSIVE|make(?:\[\d+\])?:"
    r" \*\*\*|error Command failed|info Visit|\s*at |Error: Process completed with exit code"
    r"|<shellId|\[\d+(?:\.\d+)?m?s\]$|\(\d+(?:\.\d+)?m?s\)$|Done in|Elapsed"
    r"|\+ (?:CategoryInfo|FullyQualifiedErrorId)|At line:\d+|\+ .*~~~|\+ {2,}\S"
    r"|\[[\w:.-]+\] ERROR task failed|ERROR task failed|error: script \S+ exited with code)",
    re.IGNORECASE,
)
# A line that names an error: an exception, a compiler's diagnostic, a failed assertion.
_ERROR = re.compile(
    r"(?:\b[A-Z]\w*(?:Error|Exception)\b(?::|$)|\berror(?:\[E\d+\])?:|\berror TS\d+|\bpanic:"
    r"|\bfatal:|\bFATAL\b|\bcommand not found\b|\bNo such file or directory\b|\bcannot find"
    r"|\bCannot find|\bnot found\b|\bundefined: |\bundefined reference\b|\bpermission denied\b"
    r"|\bModuleNotFound|\bImportError\b|\bSyntaxError\b|\bassert(?:ion)?\b.*(?:fail|error)"
    r"|\bexpected\b.*\b(?:got|received|to)\b|✕|✗|×|--- FAIL|^FAIL\s+\S|\bE\s{2,}\S"
    r"|\bERR!|\berror\b|\bERROR:|\bfailed\b|\bFailed\b)",
)
_SPECIFIC = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b|\berror(?:\[E\d+\])?:|error TS\d+|\bpanic:|\bfatal:"
    r"|:\d+(?::\d+)?:? (?i:error)\b|^\S+\.\w+:\d+:\d+: \S"
    r"|command not found|No such file|[Cc]annot find|ModuleNotFound|undefined: |--- FAIL"
    r"|^\s*Expected\b|\bexpected\b.*\b(?:got|received|but)\b|✕|✗|×|\bE\s{2,}\S|permission denied"
    r"|is not a valid|is not recognized as"
)
# Output that shows a failure, when a pipe hid the status.
_FAILED_OUTPUT = re.compile(
    r"(?:^|\n)\s*(?:FAIL\b|FAILED\b|--- FAIL|npm ERR!|ERR_PNPM|Traceback \(most recent"
    r"|panic:|error(?:\[E\d+\])?:|\S+\.\w+:\d+:\d+: error|.*\berror TS\d+)"
    r"|\b[1-9]\d* (?:fail|failed|failing|errors?)\b|\bFAILED \(|make(?:\[\d+\])?: \*\*\*"
    r"|\bexit (?:status|code) [1-9]",
    re.IGNORECASE,
)
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """The text as a person reads it on a terminal: escape sequences and control
    characters out (line breaks and tabs stay)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def kept(output: str) -> str:
    """What of an output is read: its head (a compiler's first diagnostics) and its tail
    (a traceback's end, a runner's failures), plain."""
    if len(output) > OUTPUT_HEAD + OUTPUT_TAIL:
        output = output[:OUTPUT_HEAD] + "\n" + output[-OUTPUT_TAIL:]
    return plain(output)


def cancelled(output: str) -> bool:
    """A call the client cancelled (a sibling call failed, the user refused or stopped
    it), or answered before its command ended: no failure of the command's, and no pass."""
    return bool(_CANCELLED.search(output[:2_000]) or _UNFINISHED.search(output[-1_000:]))


def exit_code_in(output: str) -> int | None:
    """The exit status a client wrote into the result's text, the last one; None."""
    found = _EXIT.findall(output[-4_000:]) or _EXIT.findall(output[:600])
    return int(found[-1]) if found else None


# A here-document's body (a commit message, a file written inline): data, not commands.
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n.*?\n\s*\2\b", re.DOTALL)


def segments(command: str) -> list[list[str]]:
    """A command line's simple commands (at pipes, `&&`, `||`, `;` and line breaks), each
    as its words, redirections left out."""
    return [words for words, _ in commands(command)]


# A redirection of what a command prints: `>`, `>>`, `1>`, `&>` (standard error's `2>` is not).
_TO_FILE = re.compile(r"(?:1?|&)>>?")


def commands(command: str) -> list[tuple[list[str], str]]:
    """segments(), each with the file its output was redirected to (`> out.txt`; "" for
    none)."""
    import shlex

    flat = _HEREDOC.sub(" ", command.replace("\\\n", " "))
    try:
        lexer = shlex.shlex(flat, posix=True, punctuation_chars="|&;\n")
        lexer.whitespace = " \t\r"  # a line break ends a command, as `;` does
        lexer.whitespace_split = True
        lexer.commenters = ""
        tokens = list(lexer)
    except ValueError:
        tokens = re.split(r"(\|\||&&|[|;\n])|\s+", flat)
        tokens = [t for t in tokens if t]
    found: list[tuple[list[str], str]] = []
    current: list[str] = []
    output = ""
    skip_next = to_output = False
    for token in tokens:
        if set(token) <= set("|&;\n"):
            if current:
                found.append((current, output))
            current, output = [], ""
            continue
        if skip_next:
            output = token if to_output else output
            skip_next = to_output = False
            continue
        if re.fullmatch(r"\d?>>?|\d?<|&>>?|>&|\d>&\d?|<<<?", token):
            skip_next = not token.endswith(("&1", "&2"))
            to_output = bool(_TO_FILE.fullmatch(token))
            continue
        if re.fullmatch(r"\d?>>?\S+|\d?>&\d|&>\S+|<\S+", token):
            glued = re.match(r"(?:1|&)?>>?(?=[^>&])", token)
            output = token[glued.end() :] if glued else output
            continue
        current.append(token)
    if current:
        found.append((current, output))
    return found


def unwrapped(words: list[str]) -> tuple[list[str], list[str]]:
    """(environment assignments, the words from the program on) of a simple command,
    wrappers unwrapped (`npx vitest run` is `vitest run`)."""
    env: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if "=" in word and word.split("=", 1)[0].isidentifier() and not word.startswith("-"):
            env.append(word)
            i += 1
        elif word in _RUNS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
        elif (
            (word == "timeout" and i + 1 < len(words))
            or (i + 1 < len(words) and (word, words[i + 1]) in _RUNS_TWO)
            or (word.startswith(("python", "py")) and i + 2 < len(words) and words[i + 1] == "-m")
        ):
            i += 2
        else:
            break
    return env, words[i:]


def program_name(word: str) -> str:
    return re.split(r"[\\/]", word)[-1].removesuffix(".exe").removesuffix(".cmd")


def work(command: str) -> list[list[str]]:
    """The simple commands of a command line that do the work (not `cd`, `echo`, the
    filters its output is piped through), each from its program on."""
    found = []
    for words in segments(command):
        _, rest = unwrapped(words)
        if rest and program_name(rest[0]) not in PLUMBING:
            found.append(rest)
    return found


def key_of(words: list[str]) -> str:
    """What a simple command does: its program and first arguments, flags and their values
    left out (`pytest tests/x.py -q` and `pytest -q tests/x.py` are one)."""
    kept_words = [program_name(words[0])]
    if kept_words[0] == "git":  # git's arguments are messages and paths: its verb says it
        verb = next((w for w in words[1:] if not w.startswith("-")), "")
        return f"git {verb}".strip()
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _VALUE_FLAGS
            continue
        kept_words.append(word)
        if len(kept_words) == KEY_WORDS:
            break
    return " ".join(kept_words)


def keys(command: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(key_of(words) for words in work(command)))


def same_work(failed: str, passed: str) -> bool:
    """The command that passed does the work of the one that failed, run again: every
    simple command of the failed one's is among the passing one's, whatever the pipes,
    redirects, `cd` and environment around them (`bun run lint` passing is no `bun run
    test` fixed)."""
    wanted = keys(failed)
    return bool(wanted) and set(wanted) <= set(keys(passed))


def environment(command: str) -> list[str]:
    """The environment assignments a command line sets before its programs."""
    found = []
    for words in segments(command):
        env, _ = unwrapped(words)
        found += env
    return found


def is_filtered(command: str) -> bool:
    """The command's output goes through a filter (`| tail`), whose status the shell
    reports: a failure of what fed it is not in the exit status."""
    parts = re.split(r"(?<!\|)\|(?!\|)", command)
    return len(parts) > 1 and any(
        (program_name(w[0]) in FILTERS) for part in parts[1:] for w in segments(part)[:1] if w
    )


def swallows_status(command: str) -> bool:
    """`cmd || true`, `cmd; echo done`: the status is not the command's."""
    return bool(re.search(r"\|\|\s*(?:true|:|echo)\b|;\s*(?:echo|true)\b\s*[^|&;]*$", command))


def failed_output(output: str) -> bool:
    """The output shows a failure: a runner's failed tests, a compiler's error, a
    traceback (read when a pipe hid the status)."""
    return bool(_FAILED_OUTPUT.search(output))


# What a failed command's last lines say, where the client reports no exit status.
_NAMES_A_FAILURE = re.compile(
    r"\b(error|exception|traceback|failed|failure|fatal|panic|not found|no such file"
    r"|permission denied|exit (?:code|status) [1-9]\d*)\b",
    re.IGNORECASE,
)


def failed(command: str, output: str, code: int | None) -> bool:
    """Whether a shell call failed as a person reading the terminal would say: its status,
    or, where a pipe or `|| true` hid it, what its output shows."""
    if code is not None and code != 0:
        return True
    if code == 0:
        hidden = is_filtered(command) or swallows_status(command)
        return hidden and failed_output(output)
    end = last_lines(output, 8, 2_000)  # no status known (Cursor's, some of Codex's): its end
    return failed_output(end) or bool(_NAMES_A_FAILURE.search(last_lines(end, 5)))


# A line of code a runner quotes (`func(c) error {`, `const x = f();`): never the error.
_CODE_LINE = re.compile(
    r"[{}]\s*$|=>|;\s*$|^\s*\d+\s*[|│]|\bfunc\b|\bdef \w+\(|^\s*(?:const|let|var)\s"
)


def error_lines(output: str) -> str:
    """The lines of a failed command's output that are the error itself: the first
    specific one (an exception, a compiler's diagnostic, a failed assertion) and the one
    after it when it says more, else the last line naming an error; never a runner's
    summary. Empty when none reads as an error."""
    lines = [line.strip() for line in kept(output).splitlines()]
    lines = [line for line in lines if line and not _SUMMARY.match(line)]
    specific = [
        i for i, line in enumerate(lines) if _SPECIFIC.search(line) and not _CODE_LINE.search(line)
    ]
    if specific:
        first = specific[0]
        picked = [lines[first]]
        following = lines[first + 1 : first + ERROR_LINES]
        picked += [line for line in following if _SPECIFIC.search(line) or _detail(line)]
        return "\n".join(_bare(line)[:ERROR_CHARS] for line in picked[:ERROR_LINES])
    general = [line for line in lines if _ERROR.search(line) and not _CODE_LINE.search(line)]
    return _bare(general[-1])[:ERROR_CHARS] if general else ""


def _bare(line: str) -> str:
    """An error line without pytest's `E   ` margin."""
    return re.sub(r"^E\s{2,}", "", line)


def _detail(line: str) -> bool:
    """A line that goes on with an error's detail (an assertion's expected and received)."""
    return bool(re.match(r"(?:Expected|Received|expected|received|got|want|\+|-)\b", line))


def last_lines(output: str, count: int = 5, chars: int = 600) -> str:
    """An output's last lines, plain (what stands for a failure when no line names it)."""
    lines = [line.strip() for line in kept(output).splitlines() if line.strip()]
    return "\n".join(lines[-count:])[-chars:]


_MESSAGE = re.compile(r"""(-m|--message|--body|--title)\s+("(?:[^"\\]|\\.)*"|'[^']*')""", re.DOTALL)


def shown(command: str) -> str:
    """A command as a draft names it: a here-document's body and a message's text left out
    (`git commit -m "…"`), one line."""
    cut = _HEREDOC.sub("<<…", _MESSAGE.sub(r'\1 "…"', command))
    return " ".join(cut.split())


def short(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"
