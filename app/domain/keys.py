"""API keys: random, shown once, stored only as a hash."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from uuid import UUID

Role = Literal["agent", "reader", "admin"]
ROLES: tuple[Role, ...] = ("agent", "reader", "admin")
KEY_PREFIX = "am_"

# What each role may do. Agents write and read; readers read and watch; admins do all.
CAPABILITIES: dict[str, frozenset[str]] = {
    "read": frozenset({"reader", "agent", "admin"}),
    "write": frozenset({"agent", "admin"}),
    "observe": frozenset({"reader", "admin"}),
    "admin": frozenset({"admin"}),
}
# An agent's words are not a person's nor the operator's.
TRUST_ALLOWED: dict[str, frozenset[str]] = {
    "agent": frozenset({"agent"}),
    "reader": frozenset(),
    "admin": frozenset({"agent", "user", "system"}),
}


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    """Keys carry 256 random bits, so a plain SHA-256 (no salt, no stretching) is enough,
    and it lets the database find a key by its hash with an index."""
    return hashlib.sha256(key.encode()).hexdigest()


def display_prefix(key: str) -> str:
    return key[: len(KEY_PREFIX) + 6]


@dataclass(frozen=True, slots=True)
class ApiKey:
    tenant_id: str
    id: UUID
    name: str
    role: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None
    person_id: UUID | None = None  # whom it acts for (app/domain/people.py)
