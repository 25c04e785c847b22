"""/drafts: the review queue. Drafts from past sessions wait here for a person, who keeps
one as a memory (as it is or rewritten), drops it, or puts a dropped one back."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query

from app.api.deps import ServicesDep
from app.api.examples import DraftId
from app.api.queries import DraftQueueIn
from app.api.responses import (
    DraftQueueOut,
    DroppedOut,
    QueuedDraftOut,
    QueuedOut,
    RefusedDraftOut,
    RememberOut,
    WrittenOut,
    render_remember,
)
from app.api.schemas.drafts import DraftsIn, DropDraftsIn, KeepDraftIn, RulesWrittenIn

router = APIRouter(tags=["drafts"])


@router.post(
    "/drafts",
    response_model=QueuedOut,
    status_code=201,
    summary="Queue drafts found in past sessions, for a person to review",
)
async def queue(body: DraftsIn, services: ServicesDep) -> QueuedOut:
    """What `agent-memory import-history` found: never a memory until a person keeps it. A
    draft queued before (the same text, kind and repository, from any session; kept,
    dropped or pending) is passed over, as is one that says what a live memory already
    says (`held`); one holding a secret is left out and listed in `refused`."""
    done = await services.drafts.queue(body.request())
    refused = [RefusedDraftOut(index=i, reason=reason) for i, reason in done.refused]
    return QueuedOut(queued=done.queued, known=done.known, refused=refused, held=done.held)


@router.post(
    "/drafts/written",
    response_model=WrittenOut,
    summary="The rules a repository's files (or a person's own) hold now",
)
async def written(body: RulesWrittenIn, services: ServicesDep) -> WrittenOut:
    """What `agent-memory import-files` read, every file of a scope read whole: a memory a
    person kept from a rule no longer written is proposed for retirement (a tidy proposal of
    kind `unwritten`), never archived here; drafts of such rules still pending are named; a
    pending proposal whose rule is written again is taken back."""
    done = await services.written.check(body.written())
    return WrittenOut(
        unwritten=done.unwritten,
        proposed=done.proposed,
        pending=done.pending,
        more=done.more,
        withdrawn=done.withdrawn,
    )


@router.get("/drafts", response_model=DraftQueueOut, summary="The pending drafts, newest first")
async def pending(services: ServicesDep, query: Annotated[DraftQueueIn, Query()]) -> DraftQueueOut:
    """The drafts waiting for a person, newest first, a page at a time (`next_cursor`)."""
    page = await services.drafts.pending(query.source_repo, query.limit, query.cursor)
    drafts = [QueuedDraftOut.of(d) for d in page.drafts]
    return DraftQueueOut(drafts=drafts, next_cursor=page.next_cursor)


@router.post(
    "/drafts/{draft_id:uuid}/keep",
    response_model=RememberOut,
    status_code=201,
    summary="Keep a draft as a memory, as it is or rewritten (admins; a person, their own)",
)
async def keep(
    draft_id: DraftId, services: ServicesDep, body: Annotated[KeepDraftIn | None, Body()] = None
) -> RememberOut:
    """Stores the draft (or `text`, the person's rewrite) as a memory of trust `user`, filed
    under the draft's repository with its files, through every rule a write passes."""
    text = body.text if body else None
    return render_remember(await services.drafts.keep(draft_id, text))


@router.post(
    "/drafts/drop",
    response_model=DroppedOut,
    summary="Drop drafts (admins; a person, their own): they stay dropped on a new import",
)
async def drop(body: DropDraftsIn, services: ServicesDep) -> DroppedOut:
    """Drops the pending drafts among those named; a drop is kept, so that an import of the
    same history does not bring them back (restore undoes one)."""
    return DroppedOut(dropped=await services.drafts.drop(body.ids))


@router.post(
    "/drafts/{draft_id:uuid}/restore",
    response_model=QueuedDraftOut,
    summary="Put a dropped draft back in the queue (admins)",
)
async def restore(draft_id: DraftId, services: ServicesDep) -> QueuedDraftOut:
    """Undoes a drop: the draft waits in the queue again."""
    return QueuedDraftOut.of(await services.drafts.restore(draft_id))
