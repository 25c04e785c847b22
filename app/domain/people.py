"""People: a team's members. A person owns keys (an agent's key acts for its person), and
every memory, draft and audit entry names its person. A personal memory reaches only its
person's keys (migration 0045's row policy, whatever a statement asks); docs/team.md."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from app.domain.errors import InvalidInputError
from app.domain.secrets.screen import screen
from app.domain.validation import FIELD_CHARS, clean_line, forbid_mixed_scripts


@dataclass(frozen=True, slots=True)
class Person:
    tenant_id: str
    id: UUID
    name: str
    created_at: datetime
    removed_at: datetime | None


@dataclass(frozen=True, slots=True)
class PersonSummary:
    """A person as an admin sees them: their keys, and how many personal memories they
    hold (an admin may know they exist, never read them)."""

    person: Person
    active_keys: int
    personal_memories: int


def person_name(name: str | None, field: str = "person") -> str:
    """A person's name as written everywhere: one line, one script, no credential (it is
    listed to admins and logged). `field`: where the door took it."""
    cleaned = clean_line(name, field, max_chars=FIELD_CHARS["person"])
    if not cleaned:
        raise InvalidInputError("a person needs a name", field=field)
    forbid_mixed_scripts(cleaned, field)  # an identifier, by whichever name the door took it
    return screen(cleaned, field, "refuse")


def require_person_for_personal(personal: bool, person_id: UUID | None) -> None:
    """A personal memory is someone's: a key of no one (or open mode) cannot write one."""
    if personal and person_id is None:
        raise InvalidInputError(
            "personal: true needs a key that acts for a person (`agent-memory keys create"
            " --person NAME`); this key acts for no one, so everything it writes is the team's",
            field="personal",
        )
