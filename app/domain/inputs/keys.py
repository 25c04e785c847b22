"""A key's request: its tenant, its name, its role."""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.errors import InvalidInputError
from app.domain.validation import FIELD_CHARS, clean_line, one_of


def key_request(tenant_id: str, name: str, role: str, roles: Sequence[str]) -> tuple[str, str, str]:
    tenant = clean_line(tenant_id, "tenant", max_chars=FIELD_CHARS["tenant"])
    key_name = clean_line(name, "name", max_chars=FIELD_CHARS["key_name"])
    if not tenant or not key_name:
        raise InvalidInputError("tenant and name must not be empty", field="name")
    return tenant, key_name, one_of(role, "role", roles, "agent")
