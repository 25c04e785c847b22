"""A shell command line as the shell reads it: its simple commands (at pipes, `&&`, `||`,
`;` and line breaks), each through its redirects, `cd`, environment prefixes and wrappers
(`npx vitest` is vitest), and what a command does, by its program and first arguments.
Here-documents are data, left out (here_documents.py)."""

from __future__ import annotations

import re

from agent_memory_client.shell.here_documents import without_here_documents

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

    flat = without_here_documents(command.replace("\\\n", " "))
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


_MESSAGE = re.compile(r"""(-m|--message|--body|--title)\s+("(?:[^"\\]|\\.)*"|'[^']*')""", re.DOTALL)


def shown(command: str) -> str:
    """A command as a draft names it: a here-document's body and a message's text left out
    (`git commit -m "…"`), one line."""
    cut = without_here_documents(_MESSAGE.sub(r'\1 "…"', command), "<<…")
    return " ".join(cut.split())


def short(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"
