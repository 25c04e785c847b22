"""The person's own agent writes the lesson (`import-history --distill CLIENT`), where they
allow it: their installed agent CLI, run headless under their own login, reads each
candidate the rules drafted, with its evidence, and writes the lesson or says there is none.

`plan` states the cost before anything is sent: the candidates, the characters of prompt
(the exact text, batched), an estimate in tokens, and what a budget leaves out. `distill`
then runs the CLI once a batch. Nothing goes anywhere but to that CLI's process; the CLI
talks to its own provider, as it does when the person uses it.

Each CLI runs with no tools, no hooks, no MCP servers and no session kept, from an empty
folder of ours: it may only write text, our own hooks must not record it as a session, and
its transcript must not come back as history to import. The flags, read in each one's
`--help` and tried against a stub model (Claude Code 2.1.332, Codex 0.171.0, Gemini CLI
0.61.0), are in `claude_code`, `codex` and `gemini_cli` below.

A transcript's text is data: the candidates go in as one JSON line the prompt says is data,
with every `@` escaped (Claude Code reads a file an `@path` names in a `-p` prompt, tools
or none), and the answer is parsed strictly: a batch whose answer is not the JSON asked for
keeps its candidates as the rules drafted them, never half-applied (the prompt and the
reading of the answer: lesson_prompt.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_memory_client.history.lesson_prompt import (
    ROLE,
    AnswerError,
    Verdict,
    prompt_of,
    verdicts,
)

if TYPE_CHECKING:
    from agent_memory_client.clients import Adapter
    from agent_memory_client.history import Found

BATCH = 10  # candidates a call
CHARS_PER_TOKEN = 4  # the estimate: English prose and JSON run near 4 characters a token
TIMEOUT = 300.0  # seconds a call may take before it is stopped

# The plan: what would be sent, and what the budget leaves out.


@dataclass(frozen=True)
class Batch:
    """One call: the candidates it carries (indices into the list planned; the prompt's id
    k is members[k - 1]) and its prompt, exactly as sent."""

    members: tuple[int, ...]
    prompt: str


@dataclass(frozen=True)
class Plan:
    """What `distill` will send, stated before it sends anything (`str(plan)`)."""

    candidates: int
    batches: tuple[Batch, ...]
    left_out: tuple[int, ...]  # indices the budget leaves out: they stay as drafted
    max_chars: int | None
    first_call_chars: int  # the first candidate's call alone: a budget below it sends none

    @property
    def chars(self) -> int:
        return sum(len(batch.prompt) for batch in self.batches)

    @property
    def tokens(self) -> int:
        return -(-self.chars // CHARS_PER_TOKEN)

    @property
    def sent(self) -> int:
        return sum(len(batch.members) for batch in self.batches)

    def __str__(self) -> str:
        if not self.candidates:
            return "distill: no candidates, nothing to send"
        if not self.batches:
            return (
                f"distill: nothing will be sent: the first call, of one candidate, makes"
                f" {self.first_call_chars:,} characters of prompt, over the budget of"
                f" {self.max_chars or 0:,}; all {self.candidates} stay as the rules drafted them"
            )
        lines = [
            f"distill: {self.sent} of {self.candidates} candidates, sent only to your own"
            f" agent CLI (its login pays), in {len(self.batches)} call(s) of at most {BATCH}",
            f"  {self.chars:,} characters of prompt, about {self.tokens:,} tokens (characters"
            f" / {CHARS_PER_TOKEN}), and each call adds the CLI's own instructions",
        ]
        if self.left_out:
            lines.append(
                f"  left out to stay within {self.max_chars or 0:,} characters:"
                f" {len(self.left_out)} (the least evidenced, then the oldest); they stay"
                " as the rules drafted them"
            )
        return "\n".join(lines)


def plan(
    candidates: list[Found], max_chars: int | None, *, repos: Sequence[str] | None = None
) -> Plan:
    """The calls `distill` would make, within `max_chars` characters of prompt (None: no
    limit). Candidates go in order of evidence (the most evidence fields first), then the
    newest first; the first that no longer fits, and all after it, are left out. `repos`:
    each candidate's repository, when known (a Found does not carry it)."""
    named = list(repos) if repos is not None else [""] * len(candidates)
    if len(named) != len(candidates):
        raise ValueError("repos: one for each candidate")
    order = sorted(range(len(candidates)), key=lambda i: _priority(candidates[i]), reverse=True)

    def prompt(members: Sequence[int]) -> str:
        return prompt_of([(candidates[i], named[i]) for i in members])

    first = len(prompt(order[:1])) if order else 0
    batches: list[Batch] = []
    members: list[int] = []
    text, spent = "", 0  # spent: the batches closed so far
    left_out: tuple[int, ...] = ()
    for position, index in enumerate(order):
        if len(members) == BATCH:
            batches.append(Batch(tuple(members), text))
            spent += len(text)
            members, text = [], ""
        trial = prompt([*members, index])
        if max_chars is not None and spent + len(trial) > max_chars:
            left_out = tuple(order[position:])
            break
        members, text = [*members, index], trial
    if members:
        batches.append(Batch(tuple(members), text))
    return Plan(len(candidates), tuple(batches), left_out, max_chars, first)


def _priority(found: Found) -> tuple[int, str]:
    return sum(1 for value in found.evidence.values() if value), found.seen_at or ""


# The clients, each headless, with no tools.


class CallFailed(Exception):
    """The CLI ran and failed; the message is its reason, in one line."""


@dataclass
class Headless:
    """One call of a CLI: its command line (the prompt goes on stdin), what it adds to the
    environment, how its answer is read from its output, and what to tidy after it."""

    argv: list[str]
    env: dict[str, str]
    answer: Callable[[subprocess.CompletedProcess[str]], str]
    after: Callable[[], None] = lambda: None


def claude_code(binary: str, work: Path, scratch: Path, env: Mapping[str, str]) -> Headless:
    """`claude -p`: `--tools ""` offers no built-in tool, `--strict-mcp-config` no MCP
    server, `--safe-mode` loads no hook, plugin, CLAUDE.md or skill (login and model as
    the person has them), `--no-session-persistence` keeps no transcript, and our own
    system prompt replaces the agent's (its tools, its memory folder)."""
    argv = [binary, "-p", "--output-format", "json", "--tools", "", "--strict-mcp-config",
            "--safe-mode", "--no-session-persistence", "--system-prompt", ROLE]  # fmt: skip

    def answer(done: subprocess.CompletedProcess[str]) -> str:
        result = _json_object(done.stdout)
        if result.get("is_error") or result.get("subtype") != "success" or done.returncode:
            raise CallFailed(str(result.get("result") or _last_line(done)))
        return str(result.get("result") or "")

    # Telemetry, error reports and update checks off: only the model's requests go out.
    return Headless(argv, {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}, answer)


# Codex's features that offer the model a tool (`codex features list`), or load hooks and
# plugins; an unknown name is an error, so only names 0.171's list has.
CODEX_FEATURES_OFF = (
    "shell_tool", "view_image", "multi_agent", "goals", "image_generation", "apps",
    "plugins", "hooks",
)  # fmt: skip
CODEX_CONFIG_OFF = (
    'web_search="disabled"', "tools.experimental_request_user_input.enabled=false",
    "tools.update_plan.enabled=false",
)  # fmt: skip
_TOML_BARE_KEY = re.compile(r"\A[A-Za-z0-9_-]+\Z")


def codex(binary: str, work: Path, scratch: Path, env: Mapping[str, str]) -> Headless:
    """`codex exec`: each tool-offering feature disabled, web search and the question and
    plan tools off, each MCP server of the person's config disabled by name, hooks and
    plugins off, `--ephemeral` (no rollout kept), a read-only sandbox for whatever a model
    might still be offered, and the last message written to a file of ours."""
    last = scratch / "answer.txt"
    argv = [binary, "exec", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral",
            "--color", "never", "--output-last-message", str(last)]  # fmt: skip
    for feature in CODEX_FEATURES_OFF:
        argv += ["--disable", feature]
    for setting in CODEX_CONFIG_OFF:
        argv += ["-c", setting]
    for server in codex_mcp_servers(env):
        argv += ["-c", f"mcp_servers.{server}.enabled=false"]

    def answer(done: subprocess.CompletedProcess[str]) -> str:
        if done.returncode or not last.is_file():
            raise CallFailed(_last_line(done))
        return last.read_text(encoding="utf-8", errors="replace")

    return Headless([*argv, "-"], {}, answer)


def codex_mcp_servers(env: Mapping[str, str]) -> list[str]:
    """The MCP servers the person's Codex config names (CODEX_HOME's config.toml). Only a
    name that exists may be disabled (`-c` would make an empty server of another), and
    only a bare TOML key can be named in a `-c` path."""
    import tomllib

    home = env.get("CODEX_HOME") or str(Path(env.get("HOME") or Path.home()) / ".codex")
    try:
        config = tomllib.loads((Path(home) / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    servers = config.get("mcp_servers")
    if not isinstance(servers, dict):
        return []
    return [name for name in servers if _TOML_BARE_KEY.match(name)]


# Gemini CLI: an admin policy that denies every tool (a denied tool is not offered), and
# workspace settings, read in the folder we run it from, with no hooks and no MCP server.
GEMINI_DENY_ALL = '[[rule]]\ntoolName = "*"\ndecision = "deny"\npriority = 999\n'
GEMINI_WORKSPACE = {
    "hooksConfig": {"enabled": False},
    "mcp": {"allowed": ["agent-memory-distill-allows-no-server"]},
}


def gemini_cli(binary: str, work: Path, scratch: Path, env: Mapping[str, str]) -> Headless:
    """`gemini -p`: `--admin-policy` denies every tool, `-e none` loads no extension, the
    workspace (our folder, trusted through GEMINI_CLI_TRUST_WORKSPACE) turns hooks
    and MCP servers off, and the session, named by `--session-id`, is deleted after the
    call: Gemini CLI 0.61 keeps every session, and a kept one would come back as history."""
    import uuid

    settings = work / ".gemini"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "settings.json").write_text(json.dumps(GEMINI_WORKSPACE), encoding="utf-8")
    (settings / "no-tools.toml").write_text(GEMINI_DENY_ALL, encoding="utf-8")
    session = str(uuid.uuid4())
    argv = [binary, "-p", "", "--output-format", "json", "--admin-policy",
            str(settings / "no-tools.toml"), "-e", "none", "--session-id", session]  # fmt: skip

    def answer(done: subprocess.CompletedProcess[str]) -> str:
        result = _json_object(done.stdout)
        error = result.get("error")
        if done.returncode or error or "response" not in result:
            detail = error.get("message") if isinstance(error, dict) else None
            raise CallFailed(str(detail or _last_line(done)))
        return str(result["response"])

    def after() -> None:
        home = Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or Path.home())
        for path in (home / ".gemini" / "tmp").glob(f"*/chats/session-*-{session[:8]}.json*"):
            with contextlib.suppress(OSError):
                with path.open(encoding="utf-8", errors="replace") as file:
                    ours = session in file.readline()  # its header names the session
                if ours:
                    path.unlink()

    return Headless(argv, {"GEMINI_CLI_TRUST_WORKSPACE": "true"}, answer, after)


def distillers() -> dict[str, Adapter]:
    """The clients whose CLI distils (each adapter's `distiller`), by agent name."""
    from agent_memory_client.clients import ADAPTERS

    return {adapter.name: adapter for adapter in ADAPTERS if adapter.distiller is not None}


def _json_object(stdout: str) -> dict[str, object]:
    """The JSON object a CLI printed (from the first line that opens one), or {}."""
    opening = re.search(r"^\{", stdout, re.MULTILINE)
    if opening is None:
        return {}
    try:
        found, _ = json.JSONDecoder().raw_decode(stdout, opening.start())
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
    return f"exit {done.returncode}: {lines[-1].strip()[:200] if lines else 'no output'}"


# Running it.

Runner = Callable[[list[str], str, Path, dict[str, str], float], subprocess.CompletedProcess[str]]


def run_headless(
    argv: list[str], prompt: str, cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """The CLI, the prompt on its stdin, stopped after `timeout` seconds (raises
    TimeoutExpired) with everything it started: a node CLI runs its agent as a child."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = process.communicate(prompt, timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            if hasattr(os, "killpg"):
                os.killpg(process.pid, signal.SIGKILL)
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=10)  # unless a child left the group, holding a pipe
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def distill(
    candidates: list[Found],
    client: str,
    plan: Plan,
    run: Runner = run_headless,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
    say: Callable[[str], None] = _stderr,
    record_client: bool = False,
) -> list[Found | None]:
    """The candidates, in their order, once `client`'s CLI read the planned batches: each
    answered one rewritten (its lesson and kind; evidence, files, anchors and key kept) or
    None (no lesson). A candidate the plan left out, or whose batch failed, stays as
    drafted. A missing CLI, a failed run or one out of time is said in one line and stops
    the distilling; a malformed answer is said and leaves its batch as drafted.
    `env`: the CLI's environment (this process's by default). `record_client`: evidence
    gets `distilled_by`, for a server that takes that key."""
    if plan.candidates != len(candidates):
        raise ValueError("the plan is of other candidates")
    adapter = next((a for a in distillers().values() if client in a.names), None)
    if adapter is None or adapter.distiller is None:
        raise ValueError(f"no such client: {client} (one of {', '.join(distillers())})")
    name, label, spec = adapter.name, adapter.label, adapter.distiller
    base = dict(os.environ if env is None else env)
    if not plan.batches:
        return list(candidates)
    binary = base.get(spec.override) or shutil.which(spec.program, path=base.get("PATH"))
    if not binary or not Path(binary).is_file():
        say(
            f"distill: {label} not found (install it, or set {spec.override} to its"
            " path); the drafts stay as the rules wrote them"
        )
        return list(candidates)

    import tempfile

    home = Path(base.get("HOME") or Path.home())
    work = Path(base.get("XDG_CACHE_HOME") or home / ".cache") / "agent-memory" / "distill"
    work.mkdir(parents=True, exist_ok=True)
    decided: dict[int, Verdict] = {}
    for number, batch in enumerate(plan.batches, start=1):
        with tempfile.TemporaryDirectory(prefix="agent-memory-distill-") as scratch:
            call = spec.headless(binary, work, Path(scratch), base)
            try:
                done = run(call.argv, batch.prompt, work, {**base, **call.env}, timeout)
                answer = call.answer(done)
            except (OSError, subprocess.TimeoutExpired, CallFailed) as exc:
                say(f"distill: {label} {_failure(exc, timeout)}; the rest stay as drafted")
                break
            finally:
                call.after()
        ids = range(1, len(batch.members) + 1)
        try:
            answered = verdicts(answer, ids)
        except AnswerError as exc:
            say(
                f"distill: call {number} of {len(plan.batches)}: the answer is not the JSON"
                f" asked for ({exc}); its {len(batch.members)} candidates stay as drafted"
            )
            continue
        decided.update({batch.members[k - 1]: verdict for k, verdict in answered.items()})
    kept: list[Found | None] = []
    for index, found in enumerate(candidates):
        if index not in decided:
            kept.append(found)
        elif (verdict := decided[index]) is None:
            kept.append(None)
        else:
            lesson, kind = verdict
            evidence = {**found.evidence, **({"distilled_by": name} if record_client else {})}
            kept.append(dataclasses.replace(found, text=lesson, kind=kind, evidence=evidence))
    rewritten = sum(1 for verdict in decided.values() if verdict is not None)
    say(
        f"distill: {label} rewrote {rewritten}, found no lesson in"
        f" {len(decided) - rewritten} (dropped); {len(candidates) - len(decided)} stay as"
        " the rules drafted them"
    )
    return kept


def _failure(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"did not answer within {timeout:.0f} s"
    if isinstance(exc, CallFailed):
        return f"failed ({str(exc)[:300]})"
    return f"could not run ({exc})"
