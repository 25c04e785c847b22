"""The bodies of a memory's lifecycle: the supersede's replacement, the in-place edit,
the confirmation, the prune."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from app.api.examples import REPO, body
from app.api.rules import METADATA, TAGS, documented, line_rules
from app.api.schemas.body import Body
from app.api.schemas.memories import MemoryIn
from app.api.schemas.memory_fields import Commit, Repository
from app.domain.inputs.memories import CONFIDENCES, forbid_content_change


class ReplacementIn(MemoryIn):
    """A supersede's replacement: what it leaves out (its repository, files, branch, commit,
    tags, category, pin) is the superseded memory's."""

    source_repo: Repository = Field(
        default=None, description="The repository; default: the superseded memory's."
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
