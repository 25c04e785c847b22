"""/proposals: tidy proposals (merge, replace, retire), computed in the background and on
request, never applied on their own; an admin accepts, dismisses or undoes each."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import ServicesDep
from app.api.examples import ProposalId
from app.api.responses import ComputedOut, ProposalOut, ProposalsOut, ShownProposalOut
from app.api.rules import documented
from app.domain.tidy import MAX_PROPOSALS_PAGE, PROPOSAL_KINDS, SHOWN_BY_DEFAULT
from app.shapes import MemoryOut

router = APIRouter(tags=["tidy"])


@router.get("/proposals", response_model=ProposalsOut, summary="Tidy proposals, newest first")
async def pending(
    services: ServicesDep,
    kind: Annotated[
        list[str] | None,
        Query(
            description="These kinds (default: those measured right nine times in ten or"
            f" more, and a rule deleted from its file: {', '.join(SHOWN_BY_DEFAULT)};"
            " docs/history.md)",
            json_schema_extra=documented(choices=PROPOSAL_KINDS),
            examples=[["merge"]],
        ),
    ] = None,
    limit: Annotated[
        int, Query(json_schema_extra=documented(between=(1, MAX_PROPOSALS_PAGE)))
    ] = 50,
) -> ProposalsOut:
    """The pending proposals whose memories are all still live, each with its memories
    (admins)."""
    shown = await services.tidy.pending(kind, limit)
    not_listed = await services.tidy.not_listed(kind)
    return ProposalsOut(
        not_listed=not_listed,
        proposals=[
            ShownProposalOut(
                **ProposalOut.of(s.proposal).model_dump(),
                memories=[MemoryOut.of(m) for m in s.memories],
            )
            for s in shown
        ],
    )


@router.post(
    "/proposals/refresh",
    response_model=ComputedOut,
    summary="Compute the proposals now (admins)",
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {
                        "memories": 1500,
                        "found": {"merge": 2, "replace": 5, "retire": 1},
                        "saved": 3,
                        "seconds": 0.8,
                    }
                }
            }
        }
    },
)
async def refresh(services: ServicesDep) -> ComputedOut:
    """Reads every live memory of the tenant for near pairs and stale ones, and saves what
    it finds (the schedule does this after each prune)."""
    done = await services.tidy.refresh()
    return ComputedOut(
        memories=done.memories, found=done.found, saved=done.saved, seconds=done.seconds
    )


@router.post(
    "/proposals/{proposal_id:uuid}/accept",
    response_model=ProposalOut,
    summary="Accept a proposal: merge, replace or retire its memories (admins)",
)
async def accept(proposal_id: ProposalId, services: ServicesDep) -> ProposalOut:
    """Merge and replace supersede the memories that go by the one kept; retire archives.
    Recorded in the audit trail; `undo` puts it back."""
    return ProposalOut.of(await services.tidy.accept(proposal_id))


@router.post(
    "/proposals/{proposal_id:uuid}/dismiss",
    response_model=ProposalOut,
    summary="Dismiss a proposal: not shown again while its memories stay as they were (admins)",
)
async def dismiss(proposal_id: ProposalId, services: ServicesDep) -> ProposalOut:
    """Dismissed, and audited; it comes back only when one of its memories changes (an
    edit, a stale mark)."""
    return ProposalOut.of(await services.tidy.dismiss(proposal_id))


@router.post(
    "/proposals/{proposal_id:uuid}/undo",
    response_model=ProposalOut,
    summary="Undo an accept or a dismissal: the proposal is pending again (admins)",
)
async def undo(proposal_id: ProposalId, services: ServicesDep) -> ProposalOut:
    """An accept undone through the audit trail (each memory only if nothing changed it
    since, else 409 and nothing is put back); a dismissal taken back."""
    return ProposalOut.of(await services.tidy.undo(proposal_id))
