"""A memory's fields as a request body shows them: their rules (MEMORY_RULES, from the
domain's tables), the fields other bodies take with the same rules, and where a write is
filed (WrittenIn)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from app.api.examples import body
from app.api.rules import COMMIT, METADATA, TAGS, documented, line_rules, text_rules
from app.api.schemas.body import Body
from app.domain.fields import WrittenAt
from app.domain.inputs.memories import CONFIDENCES
from app.domain.memory import MEMORY_TYPE_PATTERN, TRUST_ORDER
from app.domain.validation import MEMORY_FILES

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
