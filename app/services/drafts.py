"""The review queue: drafts from past sessions (imported history, or a session that ended
holding them) wait for a person, who keeps one as a memory (as it is, or edited), drops
it, or puts a dropped one back. Nothing in the queue is searched or handed to an agent;
every decision is audited."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from app.db.unit_of_work import UnitOfWork
from app.domain.draft_groups import near_groups
from app.domain.drafts import (
    FILE_CLIENT,
    KEPT_CATEGORY,
    MAX_QUEUE_PAGE,
    MAX_QUEUED_A_CALL,
    DraftEntry,
    HistoryDraftText,
    QueuedDraft,
    offered_personal,
    queued_draft,
)
from app.domain.errors import ConflictError, InvalidInputError, NotFoundError
from app.domain.inputs.learning import RememberRequest
from app.domain.inputs.listing import decode_cursor, encode_cursor
from app.domain.inputs.memories import source_repo_filter
from app.domain.principal import Principal
from app.domain.secrets.screen import screen_fields
from app.domain.text import cut
from app.domain.validation import Limits
from app.repository.drafts import DraftRepository, WrittenRepository
from app.services.audit import AuditTrail
from app.services.learning import LearningService, RememberResult


@dataclass(frozen=True, slots=True)
class Queued:
    """What an import call did: the drafts queued now, how many were queued before (the
    same text of the same kind for the same repository, from any session), those left
    out for holding a secret (by index, with the reason; SECRETS_POLICY=redact queues them
    redacted instead), and how many a live memory already says (passed over)."""

    queued: list[UUID]
    known: int
    refused: list[tuple[int, str]]
    held: int = 0


@dataclass(frozen=True, slots=True)
class DraftPage:
    drafts: list[DraftEntry]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class DraftGroups:
    """A page of the queue with its near-duplicates together (app/domain/draft_groups.py):
    each group led by its first draft, in the queue's order."""

    groups: list[list[DraftEntry]]
    next_cursor: str | None


class DraftQueue:
    def __init__(
        self, uow: UnitOfWork, learning: LearningService, limits: Limits, actor: Principal
    ) -> None:
        self._repo = DraftRepository(uow)
        self._written = WrittenRepository(uow)
        self._learning = learning
        self._limits = limits
        self._actor = actor
        self._audit = AuditTrail(uow, actor)

    async def queue(self, drafts: Sequence[HistoryDraftText]) -> Queued:
        """Every draft checked first (a bad one refuses the call, naming it, and nothing is
        queued); one holding a secret is left out and said; one a live memory already says
        (of its repository, or global) is passed over; the others queued."""
        self._actor.require("write")
        if len(drafts) > MAX_QUEUED_A_CALL:
            raise InvalidInputError(
                f"drafts holds at most {MAX_QUEUED_A_CALL} a call", field="drafts"
            )
        checked: list[QueuedDraft] = []
        for i, sent in enumerate(drafts):
            try:
                checked.append(offered_personal(queued_draft(sent), self._actor.person_id))
            except InvalidInputError as exc:
                field = f"drafts.{i}.{exc.field}" if exc.field else f"drafts.{i}"
                raise InvalidInputError(str(exc), field=field) from None
        screened: list[QueuedDraft] = []
        refused: list[tuple[int, str]] = []
        for i, draft in enumerate(checked):
            try:
                screened.append(screen_fields(draft, self._limits.secrets_policy))
            except InvalidInputError as exc:  # a credential: never stored, said by index
                refused.append((i, str(exc)))
        held = await self._written.held(screened)
        fresh = [draft for i, draft in enumerate(screened) if i not in held]
        queued = await self._repo.queue(fresh)
        if queued:
            await self._audit.record("draft_import", detail={"drafts": [str(d) for d in queued]})
        return Queued(queued, len(fresh) - len(queued), refused, len(held))

    async def pending(
        self, source_repo: str | None, limit: int, cursor: str | None = None
    ) -> DraftPage:
        self._actor.require("read")
        if not 1 <= limit <= MAX_QUEUE_PAGE:
            raise InvalidInputError(f"limit must be 1 to {MAX_QUEUE_PAGE}", field="limit")
        repo = source_repo_filter(source_repo)
        after = decode_cursor(cursor) if cursor is not None else None
        found = await self._repo.pending(repo, limit + 1, after)
        more = len(found) > limit
        page = found[:limit]
        last = page[-1] if more else None
        return DraftPage(page, encode_cursor(last.seen_at, last.id) if last else None)

    async def in_groups(self, source_repo: str | None, limit: int) -> DraftGroups:
        """The first page of the queue, near-duplicates together (of one repository and
        kind: draft_groups.near)."""
        page = await self.pending(source_repo, limit)
        return DraftGroups(near_groups(page.drafts), page.next_cursor)

    async def recently_dropped(self, limit: int) -> list[DraftEntry]:
        self._actor.require("admin")
        return await self._repo.recently_dropped(min(limit, MAX_QUEUE_PAGE))

    async def keep(self, draft_id: UUID, text: str | None = None) -> RememberResult:
        """A person keeps the draft as a memory of theirs (trust `user`), as it is or as
        they rewrote it: through every rule a write passes (input, secrets, merge)."""
        self._actor.require("write")
        draft = await self._repo.get(draft_id, for_update=True)
        _require_pending(draft, draft_id)
        assert draft is not None
        self._require_decider(draft)
        return await self._kept(draft, text)

    def _require_decider(self, draft: DraftEntry) -> None:
        """The team's drafts are an admin's to decide; a person decides their own (row
        security shows no one else's)."""
        if not draft.personal:
            self._actor.require("admin")

    async def keep_each(self, draft_ids: Sequence[UUID]) -> list[RememberResult]:
        """Many drafts kept at once, each as its text (a rewrite is one at a time); those
        not pending (decided since the page was read, or unknown) are passed over, as a
        drop passes them over. One refused by a write's rules refuses them all, named."""
        self._actor.require("write")
        _bounded(draft_ids)
        # One statement locks them all, in the order of their ids (not the form's): two
        # overlapping bulk keeps cannot each hold a lock the other waits for.
        pending = {d.id: d for d in await self._repo.lock_pending(draft_ids)}
        for each in pending.values():
            self._require_decider(each)
        kept = []
        for draft_id in dict.fromkeys(draft_ids):  # kept in the order they were sent
            if (draft := pending.get(draft_id)) is None:
                continue
            try:
                kept.append(await self._kept(draft, None))
            except InvalidInputError as exc:
                raise InvalidInputError(f"draft {draft_id}: {exc}", field=exc.field) from None
        return kept

    async def keep_first(
        self, draft_id: UUID, text: str | None, rest: Sequence[UUID]
    ) -> RememberResult:
        """A group of near-duplicates settled at once: its first draft kept (as it is, or
        rewritten), the rest dropped; nothing of it when the keep is refused."""
        kept = await self.keep(draft_id, text)
        others = [d for d in rest if d != draft_id]
        if others:
            await self.drop(others)
        return kept

    async def _kept(self, draft: DraftEntry, text: str | None) -> RememberResult:
        when = draft.seen_at.date().isoformat()
        result = await self._learning.learned(
            RememberRequest(
                text=draft.text if text is None else text,
                source_repo=draft.source_repo,
                personal=draft.personal,
                category=KEPT_CATEGORY.get(draft.kind),
                files=list(draft.files),
                context=self._context(draft, when),
                # A team draft's keeper is an admin, who vouches for it; a person keeping
                # their own vouches as far as their key may (an agent key's: `agent`).
                trust_level=self._actor.own_words_trust,
            ),
            source="draft-review",
        )
        outcome = result.outcome
        await self._repo.decide([draft.id], "kept", outcome.memory.id)
        detail = {"draft": str(draft.id), "edited": text is not None and text != draft.text}
        await self._audit.record("draft_keep", after=[outcome.memory], detail=detail)
        return result

    def _context(self, draft: DraftEntry, when: str) -> str:
        """A kept draft's context: where it came from, then its evidence (searched, so
        that the error it met finds the lesson again), within the context's limit. Not the
        evidence of a session that had read untrusted input: a person who keeps the lesson
        vouches for its text, and its evidence may quote what an outsider wrote."""
        if draft.client == FILE_CLIENT:
            lines = [f"Written in {draft.client_session} as of {when}, kept by a person."]
        else:
            lines = [f"Drafted from a {draft.client} session of {when}, kept by a person."]
        if not draft.sources:
            lines += [f"{label}: {text}" for label, text in draft.evidence_lines()]
        return cut("\n".join(lines), self._limits.max_context_chars)

    async def drop(self, draft_ids: Sequence[UUID]) -> list[UUID]:
        """The pending ones among them dropped (kept as dropped: an import does not bring
        them back); their ids. A person who is no admin drops their own only."""
        self._actor.require("write")
        _bounded(draft_ids)
        if not self._actor.can("admin"):
            for draft in await self._repo.lock_pending(draft_ids):
                self._require_decider(draft)
        dropped = [d.id for d in await self._repo.decide(draft_ids, "dropped")]
        if dropped:
            await self._audit.record("draft_drop", detail={"drafts": [str(d) for d in dropped]})
        return dropped

    async def restore(self, draft_id: UUID) -> DraftEntry:
        """A dropped draft back in the queue (a drop undone)."""
        self._actor.require("admin")
        restored = await self._repo.decide([draft_id], "pending")
        if not restored:
            found = await self._repo.get(draft_id)
            if found is None:
                raise NotFoundError(f"draft {draft_id} not found")
            raise ConflictError(f"draft {draft_id} is {found.status}, not dropped")
        await self._audit.record("draft_restore", detail={"draft": str(draft_id)})
        return restored[0]


def _bounded(draft_ids: Sequence[UUID]) -> None:
    if not 1 <= len(draft_ids) <= MAX_QUEUE_PAGE:
        raise InvalidInputError(f"ids holds 1 to {MAX_QUEUE_PAGE} drafts", field="ids")


def _require_pending(draft: DraftEntry | None, draft_id: UUID) -> None:
    if draft is None:
        raise NotFoundError(f"draft {draft_id} not found")
    if draft.status != "pending":
        raise ConflictError(f"draft {draft_id} is already {draft.status}")
