"""Examples shown in OpenAPI (and so in /docs): one per operation, realistic, never real keys."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import Path, Query

from app.api.rules import documented, line_rules
from app.domain.inputs.budgets import MAX_BUDGET_TOKENS, MIN_BUDGET_TOKENS
from app.domain.times import MAX_TIME_CHARS, TIME_EXAMPLES

MEMORY_ID = "0193c0de-5a1e-7b2c-9d3e-4f5a6b7c8d9e"
SESSION_ID = "0193c0df-0b1a-7c2d-8e3f-5a6b7c8d9e0f"
KEY_ID = "0193c0e0-1c2b-7d3e-9f4a-6b7c8d9e0f1a"
REPO = "acme/api"

MemoryId = Annotated[UUID, Path(description="The memory's id.", examples=[MEMORY_ID])]
SessionId = Annotated[UUID, Path(description="The session's id.", examples=[SESSION_ID])]
KeyId = Annotated[UUID, Path(description="The key's id (not the key).", examples=[KEY_ID])]
DRAFT_ID = "0193c0e1-2d3c-7e4f-8a5b-7c8d9e0f1a3c"
DraftId = Annotated[UUID, Path(description="The draft's id.", examples=[DRAFT_ID])]
PROPOSAL_ID = "0193c0e1-2d3c-7e4f-8a5b-7c8d9e0f1a4d"
ProposalId = Annotated[UUID, Path(description="The proposal's id.", examples=[PROPOSAL_ID])]
AUDIT_ID = "0193c0e1-2d3c-7e4f-8a5b-7c8d9e0f1a2b"
AuditId = Annotated[UUID, Path(description="The audit entry's id.", examples=[AUDIT_ID])]
SourceRepo = Annotated[
    str | None,
    Query(
        description="Only this repository's memories.",
        examples=[REPO],
        json_schema_extra=line_rules("source_repo"),
    ),
]
# since and until, as a query parameter and as a body field.
TIME_HELP = (
    "ISO 8601, or relative to now: " + ", ".join(TIME_EXAMPLES[2:]) + ", 3 days ago"
    " (docs/api.md, Time filters)."
)
SINCE_HELP = "Only memories stored at or after this time. " + TIME_HELP
UNTIL_HELP = "Only memories stored before this time. " + TIME_HELP
TIME_RULES: dict[str, Any] = {"maxLength": MAX_TIME_CHARS}
Since = Annotated[
    str | None, Query(description=SINCE_HELP, examples=["7d"], json_schema_extra=TIME_RULES)
]
Until = Annotated[
    str | None,
    Query(description=UNTIL_HELP, examples=["yesterday"], json_schema_extra=TIME_RULES),
]
MaxTokens = Annotated[
    int | None,
    Query(
        description="The answer's budget, in tokens",
        json_schema_extra=documented(between=(MIN_BUDGET_TOKENS, MAX_BUDGET_TOKENS)),
    ),
]


def answers(example: Any, status: int = 200, media_type: str = "application/json") -> Any:
    """`responses=` for an operation whose answer is shown by example."""
    return {status: {"content": {media_type: {"example": example}}}}


def body(*examples: dict[str, Any]) -> dict[str, Any]:
    """`json_schema_extra=` for a request body model."""
    return {"examples": list(examples)}
