"""The bodies of /memories: one memory, and a batch of them."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from app.api.examples import REPO, body
from app.api.rules import documented
from app.api.schemas.body import Body
from app.api.schemas.memory_fields import WrittenIn, with_memory_rules
from app.domain.fields import WritableMemory
from app.domain.inputs.memories import MemoryRequest


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

    def request(self) -> MemoryRequest:
        return MemoryRequest(**self.model_dump())


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
