"""A large tenant given a shard of its own, and that shard a worker of its own, on a
Citus cluster, while the service serves it (docs/scale-out.md, "Rebalancing and isolating
a tenant").

A tenant much larger than the others shares its worker's cores with the tenants on the
same worker; on a worker that holds nothing else it shares none (measured in
docs/scale-out.md). Each step is skipped when already done, so the command can be run
again after a failure or to check; the shards are vacuumed and analyzed after each step
that ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.domain.errors import ConflictError, InvalidInputError
from app.domain.placement import IsolationRequest, Node, Placement
from app.repository.placement import PlacementRepository

ONE_POSTGRESQL = (
    "this database is one PostgreSQL, not a Citus coordinator: every tenant is already on"
    " the one server"
)

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Isolated:
    before: Placement
    after: Placement
    split: bool  # a shard of its own was made
    moved: bool  # that shard was moved to the requested worker


class PlacementService:
    """Over a connection of the database's owner (the CLI on the server)."""

    def __init__(self, conn: Any) -> None:
        self._repo = PlacementRepository(conn)

    async def placement(self, tenant: str) -> tuple[Placement, list[Node]]:
        """Where the tenant is, and the cluster's workers."""
        await self._require_citus()
        return await self._repo.placement(tenant), await self._repo.workers()

    async def isolate(self, request: IsolationRequest, say: Say | None = None) -> Isolated:
        """The tenant's rows of every table on a shard of their own, on `request.to` when
        given; after each step, the new shards vacuumed and their statistics taken, which
        its search is planned from."""
        tell = say or (lambda _: None)
        await self._require_citus()
        if request.to is not None and request.to not in (workers := await self._repo.workers()):
            known = ", ".join(map(str, workers))
            raise InvalidInputError(
                f"{request.to} is not a worker of this cluster ({known})", field="to"
            )
        before = current = await self._repo.placement(request.tenant)
        if not current.own:
            tell(f"splitting shard {current.shard_id} on {current.node} ({request.transfer_mode})")
            await self._repo.isolate(request.tenant, request.transfer_mode)
            await self._keep_up(tell)  # before the move, which takes minutes at a million
            current = await self._repo.placement(request.tenant)
        moved = False
        if request.to is not None and current.node != request.to:
            tell(f"moving shard {current.shard_id} from {current.node} to {request.to}")
            await self._repo.move(current.shard_id, current.node, request.to, request.transfer_mode)
            await self._keep_up(tell)
            current, moved = await self._repo.placement(request.tenant), True
        return Isolated(before, current, split=not before.own, moved=moved)

    async def _keep_up(self, tell: Say) -> None:
        """A new copy of the tenant's rows is searched as soon as it exists, planned from
        its statistics: they are taken, and the copy vacuumed, straight away."""
        tell("vacuuming and analyzing the shards")
        await self._repo.vacuum_analyze()

    async def _require_citus(self) -> None:
        if not await self._repo.distributed():
            raise ConflictError(ONE_POSTGRESQL)
