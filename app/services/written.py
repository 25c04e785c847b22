"""The rules a person's files hold now (`agent-memory import-files`, after it queued a
scope's drafts): a memory kept from a file's rule that no file of the scope holds any more
is proposed for retirement (a tidy proposal, `unwritten`), never archived here; a draft of
such a rule still waiting for review is named, for the person to drop; and a pending
proposal whose rule is written again (put back) is taken back."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.drafts import FILE_CLIENT, MAX_UNWRITTEN, WrittenText, written_rules
from app.domain.memory import Memory
from app.domain.principal import Principal
from app.domain.tidy import UNWRITTEN, Candidate, unwritten_proposal
from app.repository.drafts import WrittenRepository
from app.repository.memories import MemoryRepository
from app.repository.tidy import TidyRepository


@dataclass(frozen=True, slots=True)
class Unwritten:
    unwritten: int  # the scope's drafts (kept or pending) whose rule is no longer written
    proposed: int  # retirement proposals made now (a pending one is not made twice)
    pending: list[UUID]  # of those drafts, the ones still waiting for review
    more: bool  # more than MAX_UNWRITTEN: the rest are weighed at the next run
    withdrawn: int = 0  # pending proposals taken back: their rule is written again


def candidate_of(memory: Memory) -> Candidate:
    return Candidate(
        memory.id, memory.content, memory.memory_type, memory.source_repo, memory.version,
        memory.created_at, memory.access_count,
    )  # fmt: skip


class WrittenRules:
    def __init__(self, uow: UnitOfWork, actor: Principal) -> None:
        self._actor = actor
        self._written = WrittenRepository(uow)
        self._memories = MemoryRepository(uow)
        self._proposals = TidyRepository(uow)

    async def check(self, sent: WrittenText) -> Unwritten:
        """`sent`: every rule a scope's files hold now. Asks a person; changes no memory."""
        self._actor.require("write")
        rules = written_rules(sent)
        withdrawn = await self._written.written_again(
            UNWRITTEN, FILE_CLIENT, rules.source_repo, rules.keys
        )
        gone = await self._written.unwritten(
            FILE_CLIENT, rules.source_repo, rules.keys, MAX_UNWRITTEN + 1
        )
        more, gone = len(gone) > MAX_UNWRITTEN, gone[:MAX_UNWRITTEN]
        kept = {d.memory_id: d for d in gone if d.status == "kept" and d.memory_id is not None}
        live = [
            m
            for m in await self._memories.get_many(list(kept))
            if m.superseded_by is None and m.archived_at is None
        ]
        proposals = [unwritten_proposal(candidate_of(m), kept[m.id].client_session) for m in live]
        proposed = await self._proposals.save(proposals)
        pending = [d.id for d in gone if d.status == "pending"]
        return Unwritten(len(gone), proposed, pending, more, withdrawn)
