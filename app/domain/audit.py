"""The audit trail's vocabulary: what is recorded, and what of a memory an entry keeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from app.domain.fields import AUDITED_FIELDS
from app.domain.memory import Memory

# Every state-changing operation but a plain store or reinforcement.
MAX_AUDIT_PAGE = 500  # entries one page of the trail holds at most
ACTIONS = (
    "edit",
    "pin",
    "unpin",
    "supersede",
    "archive",
    "restore",
    "delete",
    "prune",
    "import",
    "quarantine",
    "feedback",
    "confirm",
    "approve",
    "mark_stale",
    "session_delete",
    "key_create",
    "key_revoke",
    "undo",
    "draft_import",
    "draft_keep",
    "draft_drop",
    "draft_restore",
    "proposal_dismiss",
    "proposal_restore",
    "person_add",
    "person_remove",
    "personal_delete",
    # A connected client (app/domain/oauth.py): a person's approval, a token refresh, and
    # its end (by a person, an admin, the client itself, or a code or refresh token reused).
    "oauth_grant",
    "oauth_refresh",
    "oauth_revoke",
    # A person signed in to the console through the identity provider (app/services/oidc.py).
    "console_sign_in",
)
# What an undo can put back, from the entry's "before".
UNDOABLE = frozenset({"edit", "pin", "unpin", "supersede", "archive", "prune"})
# The fields of a memory an entry keeps (and an undo restores): the field table's.
STATE_FIELDS = AUDITED_FIELDS


def state_of(memory: Memory, names: tuple[str, ...] = STATE_FIELDS) -> dict[str, Any]:
    """The memory's fields as JSON values, with the version they were at."""
    state: dict[str, Any] = {"version": memory.version}
    for name in names:
        value = getattr(memory, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, UUID):
            value = str(value)
        state[name] = value
    return state


@dataclass(frozen=True, slots=True)
class AuditEntry:
    tenant_id: str
    id: UUID
    at: datetime
    actor_key: UUID | None
    actor_role: str
    action: str
    memory_ids: list[UUID]
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    undone_by: UUID | None = None
    actor_person: UUID | None = None  # the person the actor's key acts for
    personal_to: UUID | None = None  # about this person's personal memories: theirs alone


@dataclass(frozen=True, slots=True)
class Actor:
    """Who an entry names: the key, its role, and its person."""

    key_id: UUID | None
    role: str
    person_id: UUID | None = None


@dataclass(frozen=True, slots=True)
class AuditQuery:
    since: datetime | None = None
    until: datetime | None = None
    actor_key: UUID | None = None
    memory_id: UUID | None = None
    action: str | None = None
    limit: int = 100
