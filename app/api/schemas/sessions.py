"""The bodies of /sessions: a start, its end, what it read from outside, a draft it found."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from app.api.examples import REPO, body
from app.api.rules import NAMED_COMMIT, documented, line_rules, text_rules
from app.api.schemas.body import Body
from app.api.schemas.drafts import DraftBody, DraftEvidenceIn, DraftFiles, DraftKey
from app.api.schemas.memory_fields import Branch, Commit, Repository
from app.domain.drafts import DraftText
from app.domain.provenance import MAX_SOURCE_CHARS, MAX_SOURCES, MAX_SOURCES_A_CALL
from app.domain.sessions import (
    SESSION_STATUSES,
    CommitChange,
    KeyChange,
    SessionEnd,
    SessionRequest,
)


class DraftIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {
                "text": "`pytest tests/test_upload.py` failed with: PermissionError: /tmp/up."
                " It passed after changing tests/conftest.py.",
                "files": ["tests/conftest.py"],
            }
        ),
    )

    text: DraftBody
    files: DraftFiles
    evidence: DraftEvidenceIn = Field(
        default_factory=DraftEvidenceIn,
        description="What the session showed (error, failed, change, command), carried into"
        " the review queue with the draft; screened for secrets as its text is.",
    )
    key: DraftKey = Field(
        default=None, description="The client's own key for the same lesson across sessions."
    )

    def request(self) -> DraftText:
        return DraftText(**self.model_dump())


class SourcesIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body({"sources": ["https://example.com/setup", "tool:WebSearch"]}),
    )

    sources: list[str] = Field(
        min_length=1,
        description="Where the session brought in content from outside the repository and the"
        " user: URLs, or `tool:<name>` for a tool of another MCP server. Each is kept as one"
        f" line of at most {MAX_SOURCE_CHARS} characters, credentials redacted; the session"
        f" keeps its newest {MAX_SOURCES}.",
        json_schema_extra=documented(items=MAX_SOURCES_A_CALL),
    )


class CommitChangeIn(Body):
    commit: str = Field(json_schema_extra=NAMED_COMMIT)
    files: list[str] = Field(
        default_factory=list, json_schema_extra=line_rules("path", items="changed_files")
    )


class SessionIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {"source_repo": REPO, "agent": "claude-code", "task": "Fix the flaky upload test"}
        ),
    )

    source_repo: Repository = None
    agent: str | None = Field(default=None, json_schema_extra=line_rules("agent"))
    task: str | None = Field(default=None, json_schema_extra=text_rules("task"))
    git_branch: Branch = None
    git_commit: Commit = Field(default=None, description="HEAD (7 to 64 hex digits).")
    changed_files: list[str] = Field(
        default_factory=list,
        description="Files changed since the repository's last session: memories about them"
        " are marked possibly stale.",
        json_schema_extra=line_rules("path", items="changed_files"),
    )
    history: list[CommitChangeIn] = Field(
        default_factory=list,
        description="The commits since the repository's last session, newest first, with"
        " the files each changed: a memory written at one of them is marked only for a file"
        " changed after it.",
        json_schema_extra=documented(items="history"),
    )

    def request(self) -> SessionRequest:
        fields = self.model_dump(exclude={"history"})
        history = [CommitChange(c.commit, c.files) for c in self.history]
        return SessionRequest(**fields, history=history)


class KeyChangeIn(Body):
    file: str = Field(json_schema_extra=line_rules("file"))
    action: str | None = Field(default=None, json_schema_extra=line_rules("action"))
    description: str | None = Field(default=None, json_schema_extra=text_rules("description"))


class SessionEndIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {
                "status": "completed",
                "summary": "Upload test isolated with tmp_path",
                "key_changes": [
                    {
                        "file": "tests/test_upload.py",
                        "action": "modified",
                        "description": "uses tmp_path",
                    }
                ],
            }
        ),
    )

    status: str = Field(json_schema_extra=documented(choices=SESSION_STATUSES))
    summary: str | None = Field(default=None, json_schema_extra=text_rules("summary"))
    key_changes: list[KeyChangeIn] = Field(
        default_factory=list, json_schema_extra=documented(items="key_changes")
    )

    def request(self) -> SessionEnd:
        changes = [KeyChange(**c.model_dump()) for c in self.key_changes]
        return SessionEnd(status=self.status, summary=self.summary, key_changes=changes)
