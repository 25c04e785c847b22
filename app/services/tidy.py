"""Tidy proposals (app/domain/tidy.py): computed in the background (and on an admin's
request), never applied on their own; an admin accepts or dismisses each in one click, and
undoes either. Accepting records the change as the audit trail's supersede or archive, so
that undoing it is the trail's own undo."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.db.unit_of_work import UnitOfWork, unit_of_work
from app.domain.duplicates import CONTRADICTION_SIMILARITY, NEAREST
from app.domain.errors import ConflictError, InvalidInputError, NotFoundError
from app.domain.memory import Memory
from app.domain.principal import Principal
from app.domain.tidy import (
    ARCHIVING_KINDS,
    MAX_PROPOSALS_PAGE,
    PROPOSAL_KINDS,
    RETIRE_AFTER_DAYS,
    SHOWN_BY_DEFAULT,
    NearPair,
    ProposalEntry,
    each_pair_once,
    pair_proposals,
    retire_proposal,
)
from app.domain.validation import one_of
from app.repository.lifecycle import LifecycleRepository
from app.repository.memories import MemoryRepository
from app.repository.tidy import TidyRepository
from app.runtime import Runtime
from app.services.audit import AuditService, AuditTrail

logger = logging.getLogger("agent_memory.tidy")

PAGE = 500  # a repository's memories whose neighbours one read takes (a transaction)
MAX_RETIRE = 500  # retire proposals one run makes at most


@dataclass(frozen=True, slots=True)
class Computed:
    memories: int  # live memories weighed (those with a vector)
    found: dict[str, int]  # proposals found, by kind
    saved: int  # of those, new (or back: dismissed, their memories changed since)
    seconds: float


@dataclass(frozen=True, slots=True)
class ShownProposal:
    proposal: ProposalEntry
    memories: list[Memory]  # in the proposal's order: the one kept first


async def compute_proposals(runtime: Runtime, tenant_id: str) -> Computed:
    """A tenant's proposals from all its live memories, a repository at a time, PAGE
    memories a transaction (no connection is held across the run), each page's neighbours
    in one read of the nearest (exact for a repository small beside the graph, the graph
    past it: app/repository/nearest.py), then saved in one."""
    started = time.perf_counter()
    async with unit_of_work(runtime.database, tenant_id) as uow:
        scopes = await TidyRepository(uow).scopes()
    pairs: list[NearPair] = []
    for source_repo, _ in scopes:
        pairs += await _paged_pairs(runtime, tenant_id, source_repo)
    proposals = pair_proposals(each_pair_once(pairs))
    async with unit_of_work(runtime.database, tenant_id) as uow:
        repo = TidyRepository(uow)
        stale = await repo.stale_unread(RETIRE_AFTER_DAYS, MAX_RETIRE)
        proposals += [retire_proposal(m, _files_of(reason)) for m, reason in stale]
        saved = await repo.save(proposals)
    by_kind = {kind: sum(p.kind == kind for p in proposals) for kind in PROPOSAL_KINDS}
    weighed = sum(count for _, count in scopes)
    return Computed(weighed, by_kind, saved, round(time.perf_counter() - started, 3))


async def _paged_pairs(runtime: Runtime, tenant_id: str, source_repo: str | None) -> list[NearPair]:
    pairs: list[NearPair] = []
    after: UUID | None = None
    while True:
        async with unit_of_work(runtime.database, tenant_id) as uow:
            found, after = await TidyRepository(uow).near_pairs(
                source_repo, after, PAGE, NEAREST, CONTRADICTION_SIMILARITY
            )
        pairs += found
        if after is None:
            return pairs


def _files_of(reason: dict[str, Any] | None) -> str | None:
    files = (reason or {}).get("files")
    if isinstance(files, list) and files:
        return "changed: " + ", ".join(str(f) for f in files[:3])
    return None


async def compute_quietly(runtime: Runtime, tenant_id: str) -> Computed | None:
    """For the schedule: a failure is logged, never raised."""
    try:
        return await compute_proposals(runtime, tenant_id)
    except Exception:
        logger.warning("computing tidy proposals failed", exc_info=True)
        return None


class TidyService:
    def __init__(self, uow: UnitOfWork, runtime: Runtime, actor: Principal) -> None:
        self._uow = uow
        self._runtime = runtime
        self._actor = actor
        self._repo = TidyRepository(uow)
        self._memories = MemoryRepository(uow)
        self._lifecycle = LifecycleRepository(uow)
        self._audit = AuditTrail(uow, actor)

    async def refresh(self) -> Computed:
        """Compute now (an admin's request), in transactions of its own."""
        self._actor.require("admin")
        return await compute_proposals(self._runtime, self._actor.tenant_id)

    async def pending(
        self, kinds: Sequence[str] | None = None, limit: int = 50
    ) -> list[ShownProposal]:
        """Pending proposals whose memories are all live, newest first; by default only the
        kinds measured right nine times in ten or more."""
        self._actor.require("admin")
        if not 1 <= limit <= MAX_PROPOSALS_PAGE:
            raise InvalidInputError(f"limit must be 1 to {MAX_PROPOSALS_PAGE}", field="limit")
        wanted = [one_of(kind, "kind", PROPOSAL_KINDS, "") for kind in kinds or ()]
        return await self._shown(await self._repo.pending(wanted or SHOWN_BY_DEFAULT, limit))

    async def _shown(self, rows: Sequence[ProposalEntry]) -> list[ShownProposal]:
        """Each with its memories, read in one statement for the page."""
        ids = [i for r in rows for i in r.memory_ids]
        named = {m.id: m for m in await self._memories.get_many(ids)}
        return [ShownProposal(r, [named[i] for i in r.memory_ids if i in named]) for r in rows]

    async def not_listed(self, kinds: Sequence[str] | None = None) -> dict[str, int]:
        """How many pending proposals of each kind a listing of `kinds` (by default, the
        kinds shown by default) leaves out: so that "nothing to tidy" is never said of a
        memory with proposals of a kind not shown."""
        self._actor.require("admin")
        listed = set(kinds or SHOWN_BY_DEFAULT)
        counts = await self._repo.pending_by_kind()
        return {kind: n for kind, n in counts.items() if kind not in listed and n}

    async def recently_decided(self, limit: int) -> list[ShownProposal]:
        self._actor.require("admin")
        rows = await self._repo.recently_decided(min(limit, MAX_PROPOSALS_PAGE))
        return await self._shown(rows)

    async def accept(self, proposal_id: UUID) -> ProposalEntry:
        """Merge or replace: those that go are superseded by the one kept. Retire and
        unwritten: archived. One audit entry, which the proposal's undo undoes."""
        self._actor.require("admin")
        proposal = await self._pending(proposal_id)
        memories = await self._live(proposal)
        if proposal.kind in ARCHIVING_KINDS:
            (memory,) = memories
            after = await self._lifecycle.archive(memory.id)
            assert after is not None
            entry = await self._audit.record(
                "archive", [memory], [after], {"proposal": str(proposal_id)}
            )
        else:
            kept, *going = memories
            for memory in going:
                if not await self._lifecycle.mark_superseded(memory.id, kept.id, memory.version):
                    raise ConflictError(f"memory {memory.id} changed since: compute again")
            after_all = await self._memories.get_many([m.id for m in going])
            entry = await self._audit.record(
                "supersede", going, after_all,
                {"proposal": str(proposal_id), "kind": proposal.kind, "kept": str(kept.id)},
            )  # fmt: skip
        await self._repo.decide(proposal_id, "accepted", entry.id)
        return await self._get(proposal_id)

    async def dismiss(self, proposal_id: UUID) -> ProposalEntry:
        """Not shown again while its memories stay as they were."""
        self._actor.require("admin")
        proposal = await self._pending(proposal_id)
        entry = await self._audit.record(
            "proposal_dismiss", detail={"proposal": str(proposal_id), "kind": proposal.kind},
            memory_ids=proposal.memory_ids,
        )  # fmt: skip
        await self._repo.decide(proposal_id, "dismissed", entry.id)
        return await self._get(proposal_id)

    async def undo(self, proposal_id: UUID) -> ProposalEntry:
        """An accepted proposal's change put back (the audit trail's undo: each memory only
        if nothing changed it since), or a dismissal taken back; pending again either way."""
        self._actor.require("admin")
        proposal = await self._get(proposal_id)
        if proposal.status == "pending":
            raise ConflictError(f"proposal {proposal_id} is pending: nothing to undo")
        if proposal.status == "accepted" and proposal.audit_id is not None:
            await AuditService(self._uow, self._audit, self._actor).undo(proposal.audit_id)
        else:
            await self._audit.record(
                "proposal_restore", detail={"proposal": str(proposal_id)},
                memory_ids=proposal.memory_ids,
            )  # fmt: skip
        await self._repo.decide(proposal_id, "pending", None)
        return await self._get(proposal_id)

    async def _get(self, proposal_id: UUID) -> ProposalEntry:
        found = await self._repo.get(proposal_id)
        if found is None:
            raise NotFoundError(f"proposal {proposal_id} not found")
        return found

    async def _pending(self, proposal_id: UUID) -> ProposalEntry:
        found = await self._get(proposal_id)
        if found.status != "pending":
            raise ConflictError(f"proposal {proposal_id} is already {found.status}")
        return found

    async def _live(self, proposal: ProposalEntry) -> list[Memory]:
        """Its memories, in its order, each still live and unchanged in kind."""
        found = {m.id: m for m in await self._memories.get_many(list(proposal.memory_ids))}
        memories = [found.get(i) for i in proposal.memory_ids]
        if any(m is None or m.superseded_by or m.archived_at for m in memories):
            raise ConflictError(
                f"proposal {proposal.id}: a memory it names was archived, superseded or deleted"
                " since; it no longer applies"
            )
        return [m for m in memories if m is not None]
