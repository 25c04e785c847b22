"""A tenant's placement on a Citus cluster: its shard, the worker holding it, and the moves
that give it a shard and a worker of its own (app/services/placement.py).

Runs as the database's owner (Citus's shard functions need the tables' owner), across
tenants, as key management does. Every tenant table is co-located with `memories`, so
what is done to its shard of `memories` (with CASCADE) is done to the tenant's rows of
every table.
"""

from __future__ import annotations

from typing import Any

from app.db.pool import on_citus
from app.domain.placement import Node, Placement
from app.repository.sql import named

# The shard's range is one hash value when the shard holds this tenant alone.
_PLACEMENT = """
SELECT shard.shardid AS shard_id, node.nodename AS host, node.nodeport AS port,
       shard.shardminvalue = shard.shardmaxvalue AS own
FROM pg_dist_shard shard
JOIN pg_dist_placement placement USING (shardid)
JOIN pg_dist_node node USING (groupid)
WHERE shard.shardid = get_shard_id_for_distribution_column('memories', :tenant::text)
  AND node.noderole = 'primary'
"""

_WORKERS = """
SELECT nodename AS host, nodeport AS port FROM pg_dist_node
WHERE groupid <> 0 AND noderole = 'primary' AND isactive
ORDER BY nodename, nodeport
"""

_ISOLATE = """
SELECT isolate_tenant_to_new_shard('memories', :tenant::text, 'CASCADE',
                                   shard_transfer_mode => :transfer_mode::citus.shard_transfer_mode)
"""

_MOVE = """
SELECT citus_move_shard_placement(:shard_id, :from_host, :from_port, :to_host, :to_port,
                                  shard_transfer_mode => :transfer_mode::citus.shard_transfer_mode)
"""

# A split or a move copies the tenant's rows into a new table, which has no statistics
# until it is analyzed: the worker then plans the tenant's search for a handful of rows
# (its vector side sorts every row of the tenant), and the keyword side, which takes a
# shard's common terms from them (migrations/sql/memory_keyword_postings), reads every
# common term. Analyzed, not yet vacuumed, the search was still slower (docs/scale-out.md,
# "A shard without statistics"). On the coordinator, VACUUM of a distributed table runs
# on each of its shards; a shard with nothing new since its last vacuum is passed over
# quickly.
_VACUUM_ANALYZE = "VACUUM (ANALYZE) memories, memory_access"


class PlacementRepository:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def distributed(self) -> bool:
        """Whether the database is a Citus coordinator's."""
        return await on_citus(self._conn)

    async def placement(self, tenant: str) -> Placement:
        row = await self._conn.fetchrow(*named(_PLACEMENT, {"tenant": tenant}))
        return Placement(row["shard_id"], Node(row["host"], row["port"]), row["own"])

    async def workers(self) -> list[Node]:
        return [Node(row["host"], row["port"]) for row in await self._conn.fetch(_WORKERS)]

    async def isolate(self, tenant: str, transfer_mode: str) -> None:
        await self._conn.execute(
            *named(_ISOLATE, {"tenant": tenant, "transfer_mode": transfer_mode})
        )

    async def move(self, shard_id: int, source: Node, target: Node, transfer_mode: str) -> None:
        values = {
            "shard_id": shard_id,
            "from_host": source.host,
            "from_port": source.port,
            "to_host": target.host,
            "to_port": target.port,
            "transfer_mode": transfer_mode,
        }
        await self._conn.execute(*named(_MOVE, values))

    async def vacuum_analyze(self) -> None:
        await self._conn.execute(_VACUUM_ANALYZE)
