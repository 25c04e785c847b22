"""A shell command's output as a person reads it on a terminal: whether the command failed
(an exit status in the text, a failure a pipe into `tail` hid, a call the client
cancelled), and which of its lines is the real error (not a runner's summary)."""

from __future__ import annotations

import re

from agent_memory_client.shell.command import FILTERS, program_name, segments

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
