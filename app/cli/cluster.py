"""agent-memory isolate-tenant: a large tenant given a shard, and a worker, of its own on a
Citus cluster, straight in the database as its owner (what an operator of the cluster
does; docs/scale-out.md)."""

from __future__ import annotations

import argparse

from app.cli.common import Adder, Parents, local_database, owner_connection, run_async, say
from app.domain.placement import TRANSFER_MODES


def register(command: Adder, parents: Parents) -> None:
    isolate = command(
        "isolate-tenant",
        "give a tenant a shard of its own on a Citus cluster, and move it to a worker"
        " (--to); each step already done is skipped",
        [parents.data_dir],
    )
    isolate.add_argument("tenant", help="the tenant, as its keys name it")
    isolate.add_argument(
        "--to", metavar="HOST:PORT", help="the worker to move its shard to (see --status)"
    )
    isolate.add_argument(
        "--transfer-mode",
        choices=TRANSFER_MODES,
        default=TRANSFER_MODES[0],
        help="block_writes: the tenant's writes wait while its rows are copied;"
        " force_logical: only at the switch (needs wal_level = logical on the workers)",
    )
    isolate.add_argument(
        "--status", action="store_true", help="say where the tenant is and which workers exist"
    )
    isolate.set_defaults(func=cmd_isolate_tenant)


def cmd_isolate_tenant(args: argparse.Namespace) -> int:
    from app.domain.placement import isolation_request
    from app.services.placement import PlacementService

    async def run(url: str) -> int:
        async with owner_connection(url, "isolate-tenant") as conn:
            request = isolation_request(args.tenant, args.to, args.transfer_mode)
            service = PlacementService(conn)
            if args.status:
                where, workers = await service.placement(request.tenant)
                alone = "of its own" if where.own else "shared with other tenants"
                print(f"{request.tenant}: shard {where.shard_id} ({alone}) on {where.node}")
                print("workers: " + ", ".join(map(str, workers)))
                return 0
            done = await service.isolate(request, say)
            now = f"shard {done.after.shard_id} of its own, on {done.after.node}"
            if done.split or done.moved:
                print(
                    f"{request.tenant}: {now} (was shard {done.before.shard_id}"
                    f" on {done.before.node})"
                )
            else:
                print(f"{request.tenant}: already on {now}")
        return 0

    with local_database(args, migrate=False) as url:
        return run_async(run(url))
