"""Where a tenant's rows live on a Citus cluster, and the request to give one tenant a shard
(and a worker) of its own: its input rules, once."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.errors import InvalidInputError
from app.domain.validation import FIELD_CHARS, clean_line, one_of

# Citus's shard_transfer_mode: `block_writes` holds the tenant's writes while its rows are
# copied; `force_logical` copies through logical replication and holds them only at the
# switch (it needs wal_level = logical on the workers); `auto` takes logical replication
# where every table has a replica identity.
TRANSFER_MODES = ("block_writes", "force_logical", "auto")


@dataclass(frozen=True, slots=True)
class Node:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class Placement:
    """A tenant's shard of `memories` (its other tables' are co-located with it)."""

    shard_id: int
    node: Node
    own: bool  # the shard holds this tenant's hash value only


@dataclass(frozen=True, slots=True)
class IsolationRequest:
    tenant: str
    to: Node | None
    transfer_mode: str


def isolation_request(tenant_id: str, to: str | None, transfer_mode: str) -> IsolationRequest:
    tenant = clean_line(tenant_id, "tenant", max_chars=FIELD_CHARS["tenant"])
    if not tenant:
        raise InvalidInputError("tenant must not be empty", field="tenant")
    mode = one_of(transfer_mode, "transfer_mode", TRANSFER_MODES, "block_writes")
    return IsolationRequest(tenant, None if to is None else node(to), mode)


def node(text: str) -> Node:
    """`host:port`, as the cluster names its workers (pg_dist_node)."""
    host, _, port = text.strip().rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidInputError(f"'{text[:80]}' is not host:port", field="to")
    return Node(host, int(port))
