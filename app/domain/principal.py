"""Who a request acts for: a key's tenant and role (or open mode's admin), and what that
role may do. Used by every layer; decided by app/services/auth.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from app.domain.errors import ForbiddenError
from app.domain.keys import CAPABILITIES, TRUST_ALLOWED
from app.domain.memory import DEFAULT_TENANT, TrustLevel


@dataclass(frozen=True, slots=True)
class Principal:
    tenant_id: str
    role: str
    key_id: UUID | None  # None in open mode
    # The person the key acts for (app/domain/people.py): their personal memories reach
    # this principal, and what it writes names them. None: a key of no one, or open mode.
    person_id: UUID | None = None
    # The caller whose request made the service act on its own (a session start's prune):
    # the audit trail records it as the actor.
    on_behalf_of: Principal | None = None
    # The service's own work over every person's memories (pruning, an operator's tool):
    # never a key's.
    every_person: bool = False

    @property
    def accountable(self) -> Principal:
        """Who the audit trail names for what this principal does."""
        return self.on_behalf_of or self

    def can(self, capability: str) -> bool:
        return self.role in CAPABILITIES[capability]

    def require(self, capability: str) -> None:
        if not self.can(capability):
            article = "an" if self.role[0] in "aeiou" else "a"
            raise ForbiddenError(f"{article} {self.role} key may not do this ({capability})")

    def may_write_trust(self, trust_level: str) -> bool:
        return trust_level in TRUST_ALLOWED[self.role]

    def require_trust(self, trust_level: str) -> None:
        if not self.may_write_trust(trust_level):
            article = "an" if self.role[0] in "aeiou" else "a"
            raise ForbiddenError(
                f"{article} {self.role} key may not write trust_level '{trust_level}'",
                field="trust_level",
            )

    @property
    def own_words_trust(self) -> TrustLevel:
        """The trust a person's own words get under this key: `user` where the key may vouch
        for them (an admin's, open mode), else an agent's. The one rule of a console
        correction and of the CLI's `remember` (which asks for `user` and learns the key
        may not from the refusal: app/cli/memories.py as_person); docs/security.md."""
        return "user" if self.may_write_trust("user") else "agent"

    @property
    def writable_trust(self) -> list[str]:
        """The trust levels this caller may write, and so change."""
        return sorted(TRUST_ALLOWED[self.role])


OPEN_PRINCIPAL = Principal(DEFAULT_TENANT, "admin", None)


def system_principal(tenant_id: str, on_behalf_of: Principal | None = None) -> Principal:
    """The service acting on its own (pruning, backfill) for a tenant: on its schedule, or
    for a caller's request (recorded as that caller's)."""
    return Principal(tenant_id, "admin", None, on_behalf_of=on_behalf_of, every_person=True)


class Authenticates(Protocol):
    """What a door asks of authentication (app/services/auth.py's Authenticator)."""

    @property
    def open_mode(self) -> bool: ...

    async def authenticate(
        self, bearer: str | None, address: str | None = None, resource: str | None = None
    ) -> Principal: ...
