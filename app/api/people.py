"""/admin/people: an admin adds, lists and removes the people of its own tenant."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Path

from app.api.deps import ServicesDep
from app.api.examples import answers
from app.api.responses import PersonOut, RemovedPersonOut
from app.api.schemas.people import PersonIn
from app.domain.errors import NotFoundError
from app.domain.people import Person
from app.services.scope import Services

router = APIRouter(prefix="/admin/people", tags=["admin"])
PERSON_ID = "01a2522b-b934-75b9-8d0b-fc4a634126ac"
PersonId = Annotated[
    UUID, Path(description="The person's id (GET /admin/people).", examples=[PERSON_ID])
]


@router.get(
    "",
    response_model=list[PersonOut],
    summary="List this tenant's people",
    responses=answers(
        [
            {
                "id": PERSON_ID,
                "name": "alice",
                "created_at": "2026-12-07T09:00:00Z",
                "active_keys": 2,
                "personal_memories": 3,
            }
        ]
    ),
)
async def list_people(services: ServicesDep) -> list[PersonOut]:
    """This tenant's people: their active keys, and how many personal memories each holds
    (an admin may know they exist, never read them). Admins."""
    people = await services.people.list(services.principal.tenant_id)
    return [PersonOut.of(p) for p in people]


@router.post("", response_model=PersonOut, status_code=201, summary="Add a person")
async def add_person(body: PersonIn, services: ServicesDep) -> PersonOut:
    """Adds a person (or answers the present one of that name); a key then acts for them
    (POST /admin/keys with `person`). Admins."""
    person, _ = await services.people.add(services.principal.tenant_id, body.name)
    found = [p for p in await services.people.list(person.tenant_id) if p.person.id == person.id]
    return PersonOut.of(found[0])


@router.delete(
    "/{person_id:uuid}/personal",
    response_model=RemovedPersonOut,
    summary="Delete a person's personal memories",
)
async def delete_personal(person_id: PersonId, services: ServicesDep) -> RemovedPersonOut:
    """Deletes the person's personal memories (and personal drafts), which no admin reads;
    the person and their keys stay. Admins."""
    person = await _present(services, person_id)
    deleted = await services.people.delete_personal(person)
    return RemovedPersonOut(
        id=person.id, name=person.name, keys_revoked=0, personal_memories_deleted=deleted
    )


async def _present(services: Services, person_id: UUID) -> Person:
    person = await services.people.get(services.principal.tenant_id, person_id)
    if person is None or person.removed_at is not None:
        raise NotFoundError(f"person {person_id} not found")
    return person


@router.delete("/{person_id:uuid}", response_model=RemovedPersonOut, summary="Remove a person")
async def remove_person(person_id: PersonId, services: ServicesDep) -> RemovedPersonOut:
    """Removes a person: their keys are revoked and their personal memories deleted; the
    memories they wrote for the team stay, still naming them. Export theirs first with
    their key (GET /memories/export) or `agent-memory people remove --export`. Admins."""
    person = await _present(services, person_id)
    revoked, deleted = await services.people.remove(person)
    return RemovedPersonOut(
        id=person.id, name=person.name, keys_revoked=revoked, personal_memories_deleted=deleted
    )
