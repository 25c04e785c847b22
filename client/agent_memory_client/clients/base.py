"""What every adapter is, and the few readings of hook input that several clients share.

An adapter is everything known about one client: its names, its hooks and how their input
reads (the live loop), the configuration files its installer writes, its own folder, the
reader of its past sessions, and how distill runs its CLI. What it holds that a hook does
not need (the installer, the reader, distill) is reached through functions that import
it when called: a hook pays for none of it."""

from __future__ import annotations

from agent_memory_client.drafting import CHANGE_CHARS
from agent_memory_client.loop import Answer, Event
from agent_memory_client.provenance import browser_page, command_sources, tool_sources
from agent_memory_client.shell import cancelled, failed, kept

TYPE_CHECKING = False  # typing's import is a hook's cost (loop/): types for mypy alone
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from types import ModuleType
    from typing import Any

    from agent_memory_client.history.distill import Headless
    from agent_memory_client.install.files import ConfigFile


def replaced(old: object, new: object) -> str:
    """An edit's change as a short diff reads: the old lines, then the new ones (nothing
    unless both are text: a file written whole)."""
    if not (isinstance(old, str) and isinstance(new, str)):
        return ""
    lines = [f"- {line}" for line in old.strip().splitlines()]
    lines += [f"+ {line}" for line in new.strip().splitlines()]
    return "\n".join(lines)[:CHANGE_CHARS]


def change_of(tool_input: dict[str, Any]) -> str:
    """An edit's change as a person reads a short diff: what was replaced by what (nothing
    for a file written whole), of one `old_string`/`new_string` pair or a list of `edits`
    (Claude Code's MultiEdit, Cursor's afterFileEdit)."""
    edits = tool_input.get("edits")
    pairs = edits if isinstance(edits, list) else [tool_input]
    pairs = [p for p in pairs if isinstance(p, dict)]
    shown = (replaced(p.get("old_string"), p.get("new_string")) for p in pairs)
    return "\n".join(s for s in shown if s)[:CHANGE_CHARS]


class HookSpec:
    """One hook as the client's configuration declares it: its event, the tools it fires
    for (a matcher; None: every time), and the deadline the client enforces."""

    __slots__ = ("argument", "event", "matcher", "timeout_s")

    def __init__(
        self, event: str, matcher: str | None = None, argument: str = "", timeout_s: int = 5
    ) -> None:
        self.event, self.matcher, self.timeout_s = event, matcher, timeout_s
        self.argument = argument  # what `hook` is given (default: the event's name)

    @property
    def hook(self) -> str:
        return self.argument or self.event


class RuleFiles:
    """Files of rules a client reads, which import-files reads too: their source (as a
    draft names it), the folder they are in (under a repository's top or the client's own
    folder), their patterns, and names there that are not rules (the client's own working
    files)."""

    __slots__ = ("patterns", "skip", "source", "under")

    def __init__(
        self,
        source: str,
        patterns: tuple[str, ...],
        under: str = "",
        skip: frozenset[str] = frozenset(),
    ) -> None:
        self.source, self.patterns, self.under, self.skip = source, patterns, under, skip


class CheckoutRules:
    """Files of rules a client keeps for one checkout in its own folder (Claude Code's auto
    memory), which import-files reads with the checkout's: their source, the folders they
    are in given the client's folder and the checkout's top, and their patterns."""

    __slots__ = ("folders", "patterns", "source")

    def __init__(
        self, source: str, folders: Callable[[Path, Path], list[Path]], patterns: tuple[str, ...]
    ) -> None:
        self.source, self.folders, self.patterns = source, folders, patterns


class Home:
    """A client's own folder in the person's home, which `--ALIAS-dir` names instead:
    import-history finds its past sessions there (its reader's `transcript_files`), and
    import-files reads the person's own rules there (`rules`) and those it keeps for a
    checkout (`checkout_rules`). `default`: where it is, the client's own variable for it
    honoured."""

    __slots__ = ("checkout_rules", "default", "rules")

    def __init__(
        self,
        default: Callable[[], Path],
        rules: tuple[RuleFiles, ...] = (),
        checkout_rules: tuple[CheckoutRules, ...] = (),
    ) -> None:
        self.default, self.rules, self.checkout_rules = default, rules, checkout_rules


class Distiller:
    """How `import-history --distill` runs the client's CLI headless: its program on PATH,
    the variable that names its binary instead, and the command it is run with
    (history/distill.py's Headless)."""

    __slots__ = ("headless", "override", "program")

    def __init__(
        self,
        program: str,
        override: str,
        headless: Callable[[str, Path, Path, Mapping[str, str]], Headless],
    ) -> None:
        self.program, self.override, self.headless = program, override, headless


def no_events(hook: str, payload: dict[str, Any]) -> list[Event]:
    return []


def no_output(hook: str, answer: Answer) -> dict[str, Any] | None:
    return None


class Adapter:
    """A client, whole (clients/__init__.py lists them):

    - `name`: the agent's name as the server knows it (protocol.DRAFT_CLIENTS), which its
      events and drafts carry; `alias`: its short name on a command line (`install gemini`,
      `hook --client gemini`, `--gemini-dir`); either names it.
    - `hooks`, `events`, `render`, `context_hooks`: the hooks its configuration declares,
      how their input reads as the loop's events (none: nothing for memory to do), how an
      answer is written in its output shape (None: print nothing), and which of them hand
      context to the model (what the others recall waits for one of these). None of these
      for a client with no hooks.
    - `install`: the configuration files install writes for it, in the person's home or a
      project's folder (given): None for a client that has no installer.
    - `repository_rules`: the files of rules it reads in a repository (import-files).
    - `home`: its own folder, read by import-history and import-files (None: none is read).
    - `reader`: the module that reads its transcripts (history/), with `CLIENT`, `read`,
      `recognises` (how surely a file's first bytes are its format) and, when it has a
      home, `transcript_files`.
    - `distiller`: how distill runs its CLI (None: not offered)."""

    __slots__ = ("alias", "context_hooks", "distiller", "events", "home", "hooks", "install",
                 "label", "name", "reader", "render", "repository_rules")  # fmt: skip

    def __init__(
        self,
        *,
        name: str,
        alias: str,
        label: str,  # as a person names it: "Gemini CLI"
        reader: str,
        install: Callable[[Path | None], list[ConfigFile]] | None,
        home: Home | None,
        distiller: Distiller | None,
        repository_rules: tuple[RuleFiles, ...] = (),
        hooks: tuple[HookSpec, ...] = (),
        events: Callable[[str, dict[str, Any]], Sequence[Event]] = no_events,
        render: Callable[[str, Answer], dict[str, Any] | None] = no_output,
        context_hooks: frozenset[str] = frozenset(),
    ) -> None:
        self.name, self.alias, self.label, self.hooks = name, alias, label, hooks
        self.events, self.render, self.context_hooks = events, render, context_hooks
        self.install, self.home, self.reader, self.distiller = install, home, reader, distiller
        self.repository_rules = repository_rules

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.name, self.alias)))

    @property
    def home_option(self) -> str:
        """The option naming its folder instead of its home's (`--gemini-dir`)."""
        return f"--{self.alias}-dir"

    def reading(self) -> ModuleType:
        """Its transcript reader (imported now: a hook never asks)."""
        import importlib

        return importlib.import_module(self.reader)


def tool_input_of(payload: dict[str, Any]) -> dict[str, Any]:
    found = payload.get("tool_input")
    return found if isinstance(found, dict) else {}


def session_of(payload: dict[str, Any], agent: str) -> Event:
    """The session and the place of a hook whose input names them as Claude Code's does
    (`session_id`, `cwd`, `transcript_path`), which Codex and Gemini CLI follow."""
    return Event(
        "start",
        session=str(payload.get("session_id") or ""),
        agent=agent,
        cwd=text_of(payload.get("cwd")),
        transcript=text_of(payload.get("transcript_path")) or None,
    )


def at(base: Event, kind: str, **fields: Any) -> Event:
    """The client's session and place (`base`) at one moment of the loop."""
    return base.at(kind, **fields)


def fetched(base: Event, sources: Sequence[str], command: str = "") -> list[Event]:
    """The moment a tool brought untrusted input in (provenance.py's rule), if it did;
    `command`: the shell command that fetched it (outside/ reads where it put it)."""
    return [at(base, "fetched", sources=tuple(sources), command=command)] if sources else []


def tool_call(
    base: Event, tool: str, tool_input: dict[str, Any], server: str = "", mcp: bool = False
) -> list[Event]:
    """A call of a tool that is not the shell, an edit or a file's read (a web tool, another
    MCP server's), as the loop reads it, for every client's hooks and the history import
    alike: what it fetched from outside; and a browser's, what it did to the page (browsed:
    the URL it opened, or "" for a read of the page open, which outside/ follows).
    tool_sources()'s arguments."""
    page = browser_page(tool, tool_input, server, mcp)
    browsed = [at(base, "browsed", path=page)] if page is not None else []
    return [*fetched(base, tool_sources(tool, tool_input, server, mcp)), *browsed]


def shell_call(base: Event, command: str, output: str, code: int | None) -> list[Event]:
    """A shell call as the loop reads it, for every client's hooks and the history import
    alike: what it fetched from others, recorded first (it holds whatever follows); then
    nothing more when the client cancelled it (no failure, and no pass); else `failed` as
    the shell saw it (its status; where a pipe hid it or none is known, what its output
    shows) or `ran`, with the output as it is read (shell.kept(): bounded)."""
    found = fetched(base, command_sources(command), command)
    return [*found, *shell_outcome(base, command, output, code)]


def shell_outcome(base: Event, command: str, output: str, code: int | None) -> list[Event]:
    """shell_call() without what it fetched (for a reader that recorded that already)."""
    if cancelled(output):
        return []
    shown = kept(output)
    return [at(base, "failed" if failed(command, shown, code) else "ran", command=command,
               text=shown)]  # fmt: skip


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def claude_shaped(event_name: str, answer: Answer, decision: str) -> dict[str, Any] | None:
    """Claude Code's output, which Codex and Gemini CLI read too: the reminder as a
    decision (its word is the client's) with its reason, or the context beside the event's
    name."""
    if answer.reminder:
        return {"decision": decision, "reason": answer.reminder}
    if not answer.context:
        return None
    return {
        "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": answer.context}
    }
