"""agent-memory people: add, list and remove a team's people, straight in the database (as
its owner, like `keys`). A person owns keys (`keys create --person NAME` makes one on first
use); removing a person revokes their keys and deletes their personal memories, which
`--export FILE` writes out first (docs/team.md)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from app.cli.common import (
    HELP,
    Adder,
    Parents,
    local_database,
    owner_connection,
    run_async,
    say,
    settings_of,
)


def register(command: Adder, parents: Parents) -> None:
    people = command("people", "add, list or remove people (straight in the database)", [])
    actions = people.add_subparsers(dest="people_command", required=True, metavar="ACTION")
    for name, help in (
        ("add", "add a person (a key names one with `keys create --person`)"),
        ("list", "list people, their active keys and how many personal memories they hold"),
        ("remove", "remove a person: their keys revoked, their personal memories deleted"),
        ("forget", "delete a person's personal memories, unread; the person and keys stay"),
    ):
        action = actions.add_parser(
            name, help=help, description=help, parents=[parents.data_dir], formatter_class=HELP
        )
        action.add_argument("--tenant", default="default", help="the tenant")
        if name != "list":
            action.add_argument("name", help="the person's name")
    remove = actions.choices["remove"]
    remove.add_argument(
        "--export",
        type=Path,
        metavar="FILE",
        help="first write their personal memories to FILE (an export `agent-memory import`"
        " takes), then remove them",
    )
    people.set_defaults(func=cmd_people)


def cmd_people(args: argparse.Namespace) -> int:
    from app.services.people import PeopleService

    async def run(url: str) -> int:
        async with owner_connection(url, "people") as conn:
            service = PeopleService.on_connection(conn)
            if args.people_command == "add":
                person, made = await service.add(args.tenant, args.name)
                say(f"{'added' if made else 'already here:'} {person.name} ({person.id})")
            elif args.people_command == "list":
                for summary in await service.list(args.tenant):
                    print(
                        f"{summary.person.id}  {summary.person.name}"
                        f"  keys: {summary.active_keys}"
                        f"  personal memories: {summary.personal_memories}"
                    )
            elif args.people_command == "forget":
                person = await service.named(args.tenant, args.name)
                deleted = await service.delete_personal(person)
                say(f"deleted {deleted} personal memories of {person.name}")
            else:
                person = await service.named(args.tenant, args.name)
                if args.export is not None:
                    exported = await _export_personal(args, url, person.tenant_id, person.id)
                    say(f"exported {exported} personal memories of {person.name} to {args.export}")
                revoked, deleted = await service.remove(person)
                say(
                    f"removed {person.name}: {revoked} keys revoked, {deleted} personal"
                    " memories deleted; their team memories stay"
                )
        return 0

    with local_database(args, migrate=False, follow_running=True) as url:
        return run_async(run(url))


async def _export_personal(
    args: argparse.Namespace, url: str, tenant_id: str, person_id: object
) -> int:
    """The person's personal memories as an export file, read as that person sees them
    (the service's own export, then only what is theirs alone)."""
    from uuid import UUID

    from app.domain.principal import Principal
    from app.domain.transfer import ExportHeaderLine, ExportRequest, MemoryRecord
    from app.services.scope import services_for
    from app.startup import open_runtime

    assert isinstance(person_id, UUID)
    as_them = Principal(tenant_id, "admin", None, person_id)
    lines: list[str] = []
    async with (
        open_runtime(settings_of(args), database_url=url) as runtime,
        services_for(runtime, as_them) as services,
    ):
        export = await services.transfer.export(ExportRequest())
        async for memory, vector in export.memories:
            if memory.personal:
                lines.append(MemoryRecord.of(memory, vector).line())
        async for _ in export.sessions:
            pass
    header = dataclasses.replace(export.header, count=len(lines), sessions=0)
    args.export.write_text(
        ExportHeaderLine.of(header).model_dump_json() + "\n" + "".join(lines), encoding="utf-8"
    )
    return len(lines)
