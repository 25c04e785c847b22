"""What a developer already wrote down for their agents, as drafts a person reviews
(`agent-memory import-files`; docs/history.md).

Before any install, the rules a team keeps for its agents are in files each agent reads
(where.py): CLAUDE.md, AGENTS.md, GEMINI.md, Cursor's rules, Copilot's instructions, a
person's own in their home, and what Claude Code and Codex wrote down themselves. Each file
is read (never changed) into its rules, each with its line (reading.py); a repository's
files give drafts under its name, a person's own files drafts of their own
(`user_level_filing`). One rule written in two files is one draft, which names both.

Every rule's key goes to the server too (a scope whose files were all read whole): a memory
kept from a rule that is no longer written is proposed for retirement, for a person to
decide.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agent_memory_client.protocol import EVIDENCE_CHARS
from agent_memory_client.rule_files.reading import Rule, rules_in
from agent_memory_client.rule_files.where import RuleFile

# A file is read up to MAX_FILE_BYTES (Codex's MEMORY.md was seen at 325 KB: openai/codex
# #29818); at most MAX_RULES_A_FILE of its rules become drafts, in its order, and the rest
# are counted. Every rule read is still written (its key), so none is taken for deleted.
MAX_FILE_BYTES = 512 * 1024
MAX_RULES_A_FILE = 300
FILE_CLIENT = "file"  # a draft's client when a file was its source (the server's FILE_CLIENT)


def user_level_filing() -> dict[str, object]:
    """How a draft of a person's own file (in their home, read in every repository) is
    filed: under no repository, and asked to be theirs alone. The server offers it so
    where the key acts for a person, and files it as the team's global one where the key
    acts for no one (docs/team.md)."""
    return {"source_repo": None, "personal": True}


@dataclass
class FileRead:
    file: RuleFile
    rules: list[Rule] = field(default_factory=list)
    seen_at: str = ""  # its last change (ISO 8601): when its rules were written
    cut: bool = False  # larger than MAX_FILE_BYTES: read up to that
    error: str = ""  # why it could not be read

    @property
    def drafted(self) -> list[Rule]:
        return self.rules[:MAX_RULES_A_FILE]

    @property
    def left_out(self) -> int:
        """Rules past MAX_RULES_A_FILE: read, not drafted."""
        return max(0, len(self.rules) - MAX_RULES_A_FILE)


def read_file(file: RuleFile) -> FileRead:
    """A file's rules, read up to MAX_FILE_BYTES (its last line there dropped, being cut);
    one that is not text, or cannot be read, is said and has none."""
    try:
        with file.path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        changed = file.path.stat().st_mtime
    except OSError as exc:
        return FileRead(file, error=f"not readable ({exc.strerror or type(exc).__name__})")
    if b"\0" in data:
        return FileRead(file, error="not a text file")
    cut = len(data) > MAX_FILE_BYTES
    if cut:
        data = data[: data.rfind(b"\n", 0, MAX_FILE_BYTES) + 1]
    text = data.decode("utf-8", errors="replace")
    seen_at = datetime.fromtimestamp(changed, UTC).isoformat()
    return FileRead(file, rules_in(text), seen_at, cut)


@dataclass
class Scope:
    """Where a set of files' drafts are filed: a repository, or a person's own."""

    label: str  # as said: "acme/api", or "your own files"
    filing: dict[str, object]  # a draft's fields that file it (source_repo, ...)
    files: list[RuleFile]
    complete: bool = True  # every file of every kind was looked for (not one named)

    @property
    def source_repo(self) -> str | None:
        repo = self.filing.get("source_repo")
        return str(repo) if repo is not None else None


@dataclass
class ScopeDrafts:
    scope: Scope
    reads: list[FileRead]
    drafts: list[tuple[str, dict[str, object]]]  # (its file's source, the draft), file order
    keys: list[str]  # every rule written in the scope's files now

    @property
    def whole(self) -> bool:
        """Every file looked for, each read whole: a rule missing now was deleted."""
        return self.scope.complete and not any(r.cut or r.error for r in self.reads)


def where_written(file: RuleFile, rule: Rule) -> str:
    under = f" under “{rule.heading}”" if rule.heading else ""
    return f"{file.name}:{rule.line}{under}"


def drafts_of(scope: Scope, reads: Iterable[FileRead] | None = None) -> ScopeDrafts:
    """A scope's drafts: each rule once (the first file's), its evidence naming every file
    and line it is written at."""
    done = list(reads) if reads is not None else [read_file(f) for f in scope.files]
    drafts: dict[str, tuple[str, dict[str, object]]] = {}
    keys: dict[str, None] = {}
    for read in done:
        for rule in read.rules:
            keys.setdefault(rule.key)
        for rule in read.drafted:
            at = where_written(read.file, rule)
            if rule.key in drafts:
                evidence = drafts[rule.key][1]["evidence"]
                assert isinstance(evidence, dict)
                evidence["written"] = _cut(f"{evidence['written']}; {at}", EVIDENCE_CHARS)
                continue
            drafts[rule.key] = (
                read.file.source,
                {
                    "kind": rule.kind,
                    "text": rule.text,
                    "files": [],
                    **scope.filing,
                    "client": FILE_CLIENT,
                    "client_session": read.file.name,
                    "seen_at": read.seen_at,
                    "sources": [],
                    "evidence": {"written": _cut(at, EVIDENCE_CHARS)},
                    "key": rule.key,
                },
            )
    return ScopeDrafts(scope, done, list(drafts.values()), list(keys))


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"
