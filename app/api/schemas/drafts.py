"""The bodies of the review queue (/drafts): drafts found in past sessions and files,
what the files hold now, a keep, a drop; and a draft's evidence, which a session's draft
carries too."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from pydantic import ConfigDict, Field

from agent_memory_client.protocol import EVIDENCE_CHARS
from app.api.examples import REPO, body
from app.api.rules import documented, line_rules, text_rules
from app.api.schemas.body import Body
from app.domain.drafts import (
    DRAFT_CHARS,
    DRAFT_CLIENTS,
    DRAFT_FILES,
    DRAFT_KEY_CHARS,
    DRAFT_KINDS,
    FILE_CLIENT,
    MAX_QUEUE_PAGE,
    MAX_QUEUED_A_CALL,
    MAX_WRITTEN_KEYS,
    SESSION_ID_CHARS,
    HistoryDraftText,
    WrittenText,
)
from app.domain.provenance import MAX_SOURCES_A_CALL

EVIDENCE_TEXT = text_rules(chars=EVIDENCE_CHARS)
# A draft's text, its files and its key as every body that sends a draft takes them (a
# session's, POST /sessions/{id}/drafts, and the queue's, POST /drafts).
DraftBody = Annotated[str, Field(json_schema_extra=text_rules(chars=DRAFT_CHARS, required=True))]
DraftFiles = Annotated[
    list[str], Field(default_factory=list, json_schema_extra=line_rules("path", items=DRAFT_FILES))
]
DraftKey = Annotated[str | None, Field(json_schema_extra=line_rules(DRAFT_KEY_CHARS))]


class DraftEvidenceIn(Body):
    """What the session showed, for the person who reviews the draft: these keys only,
    each a text of at most EVIDENCE_CHARS."""

    error: str | None = Field(
        default=None,
        description="fix: the real error line(s) the failure met (the failing assertion,"
        " exception or compiler line, not a runner's summary).",
        json_schema_extra=EVIDENCE_TEXT,
    )
    failed: str | None = Field(
        default=None, description="fix: the command that failed.", json_schema_extra=EVIDENCE_TEXT
    )
    change: str | None = Field(
        default=None,
        description="fix: what changed: the files, and the change itself when short; or the"
        " command run to fix it.",
        json_schema_extra=EVIDENCE_TEXT,
    )
    command: str | None = Field(
        default=None,
        description="fix: the command that passes now.",
        json_schema_extra=EVIDENCE_TEXT,
    )
    said: str | None = Field(
        default=None,
        description="instruction: the user's words it comes from.",
        json_schema_extra=EVIDENCE_TEXT,
    )
    shown: str | None = Field(
        default=None,
        description="convention: the commands or words that show it.",
        json_schema_extra=EVIDENCE_TEXT,
    )
    distilled_by: str | None = Field(
        default=None,
        description="The person's own agent CLI that wrote the lesson (`import-history"
        " --distill`).",
        json_schema_extra=EVIDENCE_TEXT,
    )
    written: str | None = Field(
        default=None,
        description="A rule of a file: the file(s) and line(s) it is written at (`import-files`).",
        json_schema_extra=EVIDENCE_TEXT,
    )


class HistoryDraftIn(Body):
    kind: str = Field(
        description="`fix`: a failed command that passed after a change; `instruction`: a"
        " user's correction or standing rule; `convention`: how this project is built,"
        " tested, run or deployed.",
        json_schema_extra=documented(choices=DRAFT_KINDS),
    )
    text: DraftBody
    files: DraftFiles
    source_repo: str | None = Field(
        description="The session's repository (owner/name, as the hooks name it); null only"
        f" for a rule of a person's own file (client `{FILE_CLIENT}`), filed under none.",
        json_schema_extra=line_rules("source_repo", required=True),
    )
    client: str = Field(json_schema_extra=documented(choices=DRAFT_CLIENTS))
    client_session: str = Field(
        description="The client's own id of the session the draft was found in (client"
        f" `{FILE_CLIENT}`: the file, as `CLAUDE.md` or `~/.claude/CLAUDE.md`).",
        json_schema_extra=line_rules(SESSION_ID_CHARS, required=True),
    )
    seen_at: str | None = Field(
        default=None, description="When the session did it (ISO 8601; default: now)."
    )
    sources: list[str] = Field(
        default_factory=list,
        description="The untrusted input the session had read by then (URLs, `tool:<name>`):"
        " shown to the person who reviews the draft.",
        json_schema_extra=documented(items=MAX_SOURCES_A_CALL),
    )
    evidence: DraftEvidenceIn = Field(
        default_factory=DraftEvidenceIn,
        description="What the session showed, shown under the draft; screened for secrets"
        " as its text is.",
    )
    key: DraftKey = Field(
        default=None,
        description="The client's own key for the same lesson across sessions: a draft is"
        " then queued once per repository, kind and key (else per text).",
    )
    personal: bool = Field(
        default=False,
        description="A rule of the person's own (their own file's): offered to them alone,"
        " where the key acts for a person. A standing instruction from their prompts is"
        " offered so without asking; a fix or a repository's convention is the team's.",
    )


class DraftsIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {
                "drafts": [
                    {
                        "kind": "fix",
                        "text": "`make test` failed with: ModuleNotFoundError: No module"
                        " named 'helper'. It passed after changing helper.py.",
                        "files": ["helper.py"],
                        "source_repo": REPO,
                        "client": "codex",
                        "client_session": "01a228c6-a8d4-79d3-b4f8-5fdbc031b307",
                        "seen_at": "2026-10-02T14:03:11Z",
                        "evidence": {
                            "error": "ModuleNotFoundError: No module named 'helper'",
                            "failed": "make test 2>&1 | tail -20",
                            "change": "helper.py (added)",
                            "command": "make test",
                        },
                        "key": "fix:make test:ModuleNotFoundError helper",
                    },
                    {
                        "kind": "convention",
                        "text": "Tests run through `uv run pytest -q`, never a bare pytest.",
                        "source_repo": REPO,
                        "client": "claude-code",
                        "client_session": "66c3e9d3-5e2b-4520-8068-c586f826f0c7",
                        "evidence": {"shown": "uv run pytest -q (passed 3 times)"},
                    },
                ]
            }
        ),
    )

    drafts: list[HistoryDraftIn] = Field(
        min_length=1, json_schema_extra=documented(items=MAX_QUEUED_A_CALL)
    )

    def request(self) -> list[HistoryDraftText]:
        return [HistoryDraftText(**d.model_dump()) for d in self.drafts]


class RulesWrittenIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {
                "source_repo": REPO,
                "keys": ["rule|never push to main directly", "rule|run make test before pushing"],
            }
        ),
    )

    source_repo: str | None = Field(
        description="The repository whose files were read; null: a person's own files.",
        json_schema_extra=line_rules("source_repo", required=True),
    )
    keys: list[str] = Field(
        description="Every rule its files hold now, by the key its draft was queued with:"
        " a kept draft's rule not among them was deleted since.",
        json_schema_extra=line_rules(DRAFT_KEY_CHARS, items=MAX_WRITTEN_KEYS, required=True),
    )

    def written(self) -> WrittenText:
        return WrittenText(source_repo=self.source_repo, keys=self.keys)


class KeepDraftIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body({"text": "Generated files come from `make gen`: never edit them."})
    )

    text: str | None = Field(
        default=None,
        description="The memory's text when the person rewrote the draft (default: as drafted).",
        json_schema_extra=text_rules("max_content_chars"),
    )


class DropDraftsIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body({"ids": ["0193c0e1-2d3c-7e4f-8a5b-7c8d9e0f1a3c"]})
    )

    ids: list[Annotated[UUID, Field(strict=False)]] = Field(  # JSON has no UUID type
        min_length=1, json_schema_extra=documented(items=MAX_QUEUE_PAGE)
    )
