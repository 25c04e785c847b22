"""A session: what an agent worked on in a repository, and how it ended."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID


@dataclass(frozen=True, slots=True)
class Session:
    id: UUID
    source_repo: str | None
    agent: str | None
    task: str | None
    status: str
    summary: str | None
    key_changes: list[dict[str, Any]]
    started_at: datetime
    ended_at: datetime | None
    git_branch: str | None = None
    git_commit: str | None = None
