"""agent-memory keys: create, list and revoke API keys, straight in the database (as its
owner, across tenants; what an operator on the server does): the one the running server
uses unless one is named (common.addressed()), said on stderr."""

from __future__ import annotations

import argparse
from uuid import UUID

from app.cli.common import (
    HELP,
    Adder,
    CommandError,
    Parents,
    local_database,
    owner_connection,
    run_async,
    say,
)


def register(command: Adder, parents: Parents) -> None:
    keys = command("keys", "create, list or revoke API keys (straight in the database)", [])
    actions = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create",
        help="create a key (printed once)",
        parents=[parents.data_dir],
        formatter_class=HELP,
    )
    create.add_argument("--tenant", default="default", help="the tenant it acts for")
    create.add_argument(
        "--role",
        choices=["agent", "reader", "admin"],
        help="what it may do (default: admin when the tenant has no active key, so that"
        " someone can manage its keys; else agent)",
    )
    create.add_argument("--name", required=True, help="who or what holds it")
    create.add_argument(
        "--person",
        help="the person it acts for (made on first use): their personal memories reach it,"
        " and what it writes names them",
    )
    listing = actions.add_parser(
        "list",
        help="list keys (never the keys themselves)",
        parents=[parents.data_dir],
        formatter_class=HELP,
    )
    listing.add_argument("--tenant", help="only this tenant's (default: all)")
    revoke = actions.add_parser(
        "revoke", help="revoke a key by id", parents=[parents.data_dir], formatter_class=HELP
    )
    revoke.add_argument("key_id", help="the key's id, from `keys list`")
    revoke.add_argument(
        "--force", action="store_true", help="revoke even a tenant's last active admin key"
    )
    keys.set_defaults(func=cmd_keys)


def cmd_keys(args: argparse.Namespace) -> int:
    from app.services.keys import KeyService

    async def run(url: str) -> int:
        async with owner_connection(url, "keys") as conn:
            service = KeyService.on_connection(conn)
            if args.keys_command == "create":
                role = await service.role_of_new(args.tenant, args.role)
                created = await service.create(args.tenant, args.name, role, args.person)
                print(created.key)
                why = (
                    " (admin: the tenant had no active key, and no --role was given)"
                    if args.role is None and role == "admin"
                    else ""
                )
                person = f", acting for {args.person}" if args.person else ""
                say(
                    f"created {created.record.role} key {created.record.id} for tenant "
                    f"{created.record.tenant_id}{person}{why}: store it now, it is not shown"
                    " again"
                )
            elif args.keys_command == "list":
                for key in await service.list(args.tenant):
                    state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
                    print(
                        f"{key.id}  {key.tenant_id}  {key.role:6}  {key.prefix}…"
                        f"  {key.name}  {state}"
                    )
            else:
                revoked = await service.revoke(None, _key_id(args.key_id), args.force)
                print(f"revoked {revoked.record.id} ({revoked.record.name})")
                if revoked.note:
                    say(revoked.note)
        return 0

    with local_database(args, migrate=False, follow_running=True) as url:
        return run_async(run(url))


def _key_id(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError:
        raise CommandError(
            f"agent-memory keys: '{text[:40]}' is not a valid key id (see `keys list`)"
        ) from None
