"""REST request bodies: the shapes a client may send. Types only: every rule on the values
lives in app/domain and is applied by the services, the same for every door. The limits
shown in OpenAPI are read from the domain's table, so the docs cannot drift from the rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from uuid import UUID

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from agent_memory_client.protocol import EVIDENCE_CHARS
from app.api.examples import REPO, body
from app.api.rules import (
    COMMIT,
    METADATA,
    NAMED_COMMIT,
    TAGS,
    documented,
    line_rules,
    text_rules,
)
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
    DraftText,
    HistoryDraftText,
    WrittenText,
)
from app.domain.fields import WritableMemory, WrittenAt
from app.domain.inputs import (
    ATTEMPT_NUMBER,
    ATTEMPT_RESULTS,
    CONFIDENCES,
    FULL_CONTEXT_TOKENS,
    QUALITY_SCORE,
    TOTAL_ATTEMPTS,
    Attempt,
    FileState,
    MemoryDraft,
    RememberDraft,
    RetryDraft,
    StrategyAttempt,
    forbid_content_change,
)
from app.domain.keys import ROLES
from app.domain.learning import LEARNING_WORDS, MIN_LEARNING_WORDS
from app.domain.memory import DEFAULT_TRUST, MEMORY_TYPE_PATTERN, TRUST_ORDER
from app.domain.provenance import MAX_SOURCE_CHARS, MAX_SOURCES, MAX_SOURCES_A_CALL
from app.domain.recall import (
    MAX_EXCLUDED,
    MAX_RECALL_TOKENS,
    RECALL_TYPES,
    RecallDraft,
)
from app.domain.sessions import (
    SESSION_STATUSES,
    CommitChange,
    KeyChange,
    SessionDraft,
    SessionEnd,
)
from app.domain.validation import MEMORY_FILES


def _json_integer(value: Any) -> Any:
    """JSON Schema's integer: a number with no fraction (2.0 is 2); never a boolean."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An integer as JSON Schema has it (the models are strict: "2" and true stay refused).
JsonInt = Annotated[int, BeforeValidator(_json_integer)]


class Body(BaseModel):
    # Strict: a boolean is a JSON boolean and a number a JSON number; "1" or 0 for true is
    # refused, not guessed (`{"dry_run": 0}` must not run a real prune). An unknown field is
    # refused. Every request body inherits both (a subclass's model_config adds to them).
    model_config = ConfigDict(extra="forbid", strict=True)


# The rules of a memory's fields (WritableMemory declares them), as OpenAPI shows them on
# a body that takes them.
MEMORY_RULES: dict[str, dict[str, Any]] = {
    "content": text_rules("max_content_chars", required=True),
    "memory_type": {"pattern": MEMORY_TYPE_PATTERN},
    "category": line_rules("category"),
    "tags": TAGS,
    "source_repo": line_rules("source_repo"),
    "task_id": line_rules("task_id"),
    "trust_level": documented(choices=TRUST_ORDER),
    "confidence": documented(choices=CONFIDENCES),
    "source": line_rules("source"),
    "name": line_rules("name"),
    "metadata": METADATA,
    "context": text_rules("max_context_chars"),
    "git_branch": line_rules("git_branch"),
    "git_commit": COMMIT,
    "files": line_rules("path", items=MEMORY_FILES),
}


# The memory's fields other bodies take too, with the same rules (a body may add its own
# description).
Repository = Annotated[str | None, Field(json_schema_extra=MEMORY_RULES["source_repo"])]
Branch = Annotated[str | None, Field(json_schema_extra=MEMORY_RULES["git_branch"])]
Commit = Annotated[str | None, Field(json_schema_extra=MEMORY_RULES["git_commit"])]


# A write says where it belongs: a repository, or null for a memory that holds in every
# repository (global). Required, so that no forgotten field files one everywhere.
FILED_UNDER: Any = Field(
    description="The repository it belongs to; null: global (every repository's sessions)."
)


class WrittenIn(Body, WrittenAt):
    """Where a memory was written (WrittenAt), its repository required: a forgotten field
    must not file a memory everywhere. A body built on it shows the fields' rules
    (with_memory_rules)."""

    source_repo: str | None = FILED_UNDER


def with_memory_rules(*examples: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """`json_schema_extra=` for a body of a memory's fields: their rules, and examples."""

    def extra(schema: dict[str, Any]) -> None:
        for name, rules in MEMORY_RULES.items():
            if name in schema.get("properties", {}):
                schema["properties"][name].update(rules)
        schema.update(body(*examples))

    return extra


class MemoryIn(WrittenIn, WritableMemory):
    """Only what a client may set (WritableMemory, filed under a repository as WrittenIn
    says): ids, hashes, counters and embeddings are the server's."""

    model_config = ConfigDict(
        json_schema_extra=with_memory_rules(
            {
                "content": "Run migrations in a release step, never at app start-up",
                "memory_type": "decision",
                "tags": ["deploy", "db"],
                "source_repo": REPO,
                "context": "Two pods raced on ALTER TABLE",
            }
        ),
    )

    def draft(self) -> MemoryDraft:
        return MemoryDraft(**self.model_dump())


class ReplacementIn(MemoryIn):
    """A supersede's replacement: what it leaves out (its repository, files, branch, commit,
    tags, category, pin) is the superseded memory's."""

    source_repo: Repository = Field(
        default=None, description="The repository; default: the superseded memory's."
    )


class BatchIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {
                "memories": [
                    {
                        "content": "Prefer keyset paging over OFFSET",
                        "memory_type": "code_pattern",
                        "source_repo": REPO,
                    },
                    {
                        "content": "pytest-asyncio needs loop scope session for shared pools",
                        "source_repo": REPO,
                    },
                ]
            }
        ),
    )

    memories: list[MemoryIn] = Field(
        json_schema_extra={**documented(items="max_batch"), "minItems": 1}
    )


class AttemptIn(Body):
    step_index: JsonInt | None = None
    action: str | None = Field(default=None, json_schema_extra=text_rules("action"))
    result: str = Field(json_schema_extra=documented(choices=ATTEMPT_RESULTS))
    error: str | None = Field(default=None, json_schema_extra=text_rules("error"))


class StrategyLearnIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {
                "task_description": "Add a column with a backfill",
                "total_attempts": 1,
                "quality_score": 8.5,
                "plan_steps": [
                    "migration adds nullable column",
                    "backfill in batches",
                    "set NOT NULL",
                ],
                "source_repo": REPO,
            }
        ),
    )

    task_description: str = Field(json_schema_extra=text_rules("task_description", required=True))
    plan_steps: list[str] | None = Field(
        default=None, json_schema_extra=text_rules("plan_steps", items="plan_steps")
    )
    plan_summary: str | None = Field(default=None, json_schema_extra=text_rules("plan_summary"))
    attempt_history: list[AttemptIn] = Field(
        default_factory=list, json_schema_extra=documented(items="attempt_history")
    )
    total_attempts: JsonInt = Field(json_schema_extra=documented(between=TOTAL_ATTEMPTS))
    quality_score: float = Field(json_schema_extra=documented(between=QUALITY_SCORE))
    files_changed: list[str] = Field(
        default_factory=list, json_schema_extra=line_rules("files_changed", items="files_changed")
    )
    model: str | None = Field(default=None, json_schema_extra=line_rules("model"))
    source_repo: Repository = FILED_UNDER
    task_id: str | None = Field(default=None, json_schema_extra=line_rules("task_id"))

    def draft(self) -> StrategyAttempt:
        fields = self.model_dump(exclude={"attempt_history"})
        history = [Attempt(**a.model_dump()) for a in self.attempt_history]
        return StrategyAttempt(**fields, attempt_history=history)


class FeedbackIn(Body):
    model_config = ConfigDict(json_schema_extra=body({"outcome": "helpful"}))

    outcome: str = Field(json_schema_extra=documented(choices=("helpful", "unhelpful")))


class RememberIn(WrittenIn):
    model_config = ConfigDict(
        json_schema_extra=with_memory_rules(
            {
                "text": "The flaky upload test shared a temp dir with another test; use tmp_path",
                "source_repo": REPO,
                "context": "CI run 4411 failed twice",
            }
        ),
    )

    text: str = Field(
        description=f"A rule someone can follow, in {MIN_LEARNING_WORDS} words or more.",
        json_schema_extra=text_rules("max_content_chars", required=True, lookahead=LEARNING_WORDS),
    )
    category: str | None = None
    name: str | None = None
    reasoning: str | None = Field(default=None, json_schema_extra=text_rules("reasoning"))
    confidence: str | None = None
    references: list[str] = Field(
        default_factory=list, json_schema_extra=line_rules("references", items="references")
    )
    context: str | None = Field(
        default=None,
        description="The task or situation the learning came from; searched.",
    )

    personal: bool = Field(
        default=False,
        description="Its person's alone (a preference of theirs): never handed to another"
        " person's keys. Needs a key that acts for a person.",
    )
    trust_level: str = Field(
        default=DEFAULT_TRUST,
        description="Whose learning it is: `agent` (an agent's, the default) or, for an admin"
        " key or open mode, `user`: a person's own note, never held for review.",
        json_schema_extra=documented(choices=("agent", "user")),
    )

    def draft(self) -> RememberDraft:
        return RememberDraft(**self.model_dump())


EVIDENCE_TEXT = text_rules(chars=EVIDENCE_CHARS)


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

    text: str = Field(json_schema_extra=text_rules(chars=DRAFT_CHARS, required=True))
    files: list[str] = Field(
        default_factory=list, json_schema_extra=line_rules("path", items=DRAFT_FILES)
    )
    evidence: DraftEvidenceIn = Field(
        default_factory=DraftEvidenceIn,
        description="What the session showed (error, failed, change, command), carried into"
        " the review queue with the draft; screened for secrets as its text is.",
    )
    key: str | None = Field(
        default=None,
        description="The client's own key for the same lesson across sessions.",
        json_schema_extra=line_rules(DRAFT_KEY_CHARS),
    )

    def draft(self) -> DraftText:
        return DraftText(**self.model_dump())


class RecallIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {"q": "the upload test fails with PermissionError on /tmp/up", "source_repo": REPO}
        ),
    )

    q: str = Field(
        description="The user's prompt, or the failed command's error; searched as a query"
        " (its first distinct words). For purpose=file, the file's path in the repository.",
        json_schema_extra=text_rules("max_query_chars"),
    )
    source_repo: Repository = Field(
        default=None, description="The repository (its memories and the global ones)."
    )
    purpose: str = Field(
        default="prompt",
        description="prompt: every kind of memory; failure: error patterns and anti-patterns;"
        " file: the memories whose files name `q`, a path in the repository (stale ones"
        " marked).",
        json_schema_extra=documented(choices=tuple(RECALL_TYPES)),
    )
    max_tokens: JsonInt | None = Field(
        default=None,
        description="The budget (default RECALL_MAX_TOKENS).",
        json_schema_extra=documented(between=MAX_RECALL_TOKENS),
    )
    exclude: list[Annotated[UUID, Field(strict=False)]] = Field(  # JSON has no UUID type
        default_factory=list,
        description="Memory ids this session was already handed (the snapshot's, earlier"
        " recalls').",
        json_schema_extra=documented(items=MAX_EXCLUDED),
    )
    session_id: Annotated[UUID, Field(strict=False)] | None = Field(
        default=None,
        description="The asking session: a memory it wrote itself that waits for a person's"
        " review is still handed to it (held ones are handed to no other).",
    )

    def draft(self) -> RecallDraft:
        return RecallDraft(**self.model_dump())


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


class HistoryDraftIn(Body):
    kind: str = Field(
        description="`fix`: a failed command that passed after a change; `instruction`: a"
        " user's correction or standing rule; `convention`: how this project is built,"
        " tested, run or deployed.",
        json_schema_extra=documented(choices=DRAFT_KINDS),
    )
    text: str = Field(json_schema_extra=text_rules(chars=DRAFT_CHARS, required=True))
    files: list[str] = Field(
        default_factory=list, json_schema_extra=line_rules("path", items=DRAFT_FILES)
    )
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
    key: str | None = Field(
        default=None,
        description="The client's own key for the same lesson across sessions: a draft is"
        " then queued once per repository, kind and key (else per text).",
        json_schema_extra=line_rules(DRAFT_KEY_CHARS),
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

    def draft(self) -> list[HistoryDraftText]:
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


class FileIn(Body):
    path: str = Field(json_schema_extra=line_rules("path"))
    content: str = Field(default="", json_schema_extra=text_rules("file_content"))


class DiagnosisIn(Body):
    root_cause: str | None = Field(default=None, json_schema_extra=text_rules("description"))
    reason: str | None = Field(default=None, json_schema_extra=text_rules("description"))
    suggested_action: str | None = Field(default=None, json_schema_extra=text_rules("description"))


class RetryContextIn(Body):
    model_config = ConfigDict(
        json_schema_extra=body(
            {
                "task_description": "Fix the failing upload test",
                "attempt_number": 2,
                "current_files": [
                    {"path": "tests/test_upload.py", "content": "def test_upload(tmp_path): ..."}
                ],
                "previous_files": [
                    {"path": "tests/test_upload.py", "content": "def test_upload(): ..."}
                ],
                "validation_output": "FAILED tests/test_upload.py::test_upload - FileExistsError",
            }
        ),
    )

    task_description: str = Field(json_schema_extra=text_rules("retry_text"))
    plan_summary: str = Field(default="", json_schema_extra=text_rules("retry_text"))
    current_files: list[FileIn] = Field(
        default_factory=list, json_schema_extra=documented(items="files")
    )
    previous_files: list[FileIn] = Field(
        default_factory=list, json_schema_extra=documented(items="files")
    )
    validation_output: str = Field(default="", json_schema_extra=text_rules("validation_output"))
    diagnosis: DiagnosisIn | None = None
    attempt_number: JsonInt = Field(default=1, json_schema_extra=documented(between=ATTEMPT_NUMBER))
    full_context_tokens: JsonInt | None = Field(
        default=None, json_schema_extra=documented(between=FULL_CONTEXT_TOKENS)
    )

    def draft(self) -> RetryDraft:
        return RetryDraft(
            task_description=self.task_description,
            plan_summary=self.plan_summary,
            current_files=[FileState(f.path, f.content) for f in self.current_files],
            previous_files=[FileState(f.path, f.content) for f in self.previous_files],
            validation_output=self.validation_output,
            diagnosis=self.diagnosis.model_dump() if self.diagnosis else None,
            attempt_number=self.attempt_number,
            full_context_tokens=self.full_context_tokens,
        )


class PruneIn(Body):
    model_config = ConfigDict(json_schema_extra=body({"dry_run": True, "source_repo": REPO}))

    dry_run: bool = False
    source_repo: Repository = None


class MemoryPatch(Body):
    """Only these fields change in place; new content is a supersede."""

    model_config = ConfigDict(json_schema_extra=body({"tags": ["deploy"], "pinned": True}))

    tags: list[str] | None = Field(default=None, json_schema_extra=TAGS)
    pinned: bool | None = None
    confidence: str | None = Field(default=None, json_schema_extra=documented(choices=CONFIDENCES))
    category: str | None = Field(default=None, json_schema_extra=line_rules("category"))
    metadata: dict[str, Any] | None = Field(default=None, json_schema_extra=METADATA)

    @model_validator(mode="before")
    @classmethod
    def _content_is_immutable(cls, data: Any) -> Any:
        forbid_content_change(data)  # before "extra field": the answer says what to do
        return data

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.model_fields_set}


class ConfirmIn(Body):
    git_commit: Commit = Field(
        default=None,
        description="The commit it was checked against (7 to 64 hex digits).",
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

    def draft(self) -> SessionDraft:
        fields = self.model_dump(exclude={"history"})
        history = [CommitChange(c.commit, c.files) for c in self.history]
        return SessionDraft(**fields, history=history)


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

    def draft(self) -> SessionEnd:
        changes = [KeyChange(**c.model_dump()) for c in self.key_changes]
        return SessionEnd(status=self.status, summary=self.summary, key_changes=changes)


class PersonIn(Body):
    model_config = ConfigDict(json_schema_extra=body({"name": "alice"}))

    name: str = Field(json_schema_extra=line_rules("person", required=True))


class KeyIn(Body):
    model_config = ConfigDict(json_schema_extra=body({"name": "ci-bot", "role": "agent"}))

    name: str = Field(json_schema_extra=line_rules("key_name", required=True))
    role: str = Field(json_schema_extra=documented(choices=ROLES))
    person: str | None = Field(
        default=None,
        description="The person the key acts for, by name (made on first use): their"
        " personal memories reach it, and what it writes names them. None: a key of no one.",
        json_schema_extra=line_rules("person"),
    )
