"""The body of /recall."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from pydantic import ConfigDict, Field

from app.api.examples import REPO, body
from app.api.rules import documented, text_rules
from app.api.schemas.body import Body, JsonInt
from app.api.schemas.memory_fields import Repository
from app.domain.recall import MAX_EXCLUDED, MAX_RECALL_TOKENS, RECALL_TYPES, RecallRequest


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

    def request(self) -> RecallRequest:
        return RecallRequest(**self.model_dump())
