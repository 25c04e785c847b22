"""The JSON bodies only the API answers, built from the services' values. The shapes MCP
answers too (a memory, search results, hints, prune reports) are app/shapes.py's."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.domain.compact import compact_hits, pack
from app.domain.drafts import EVIDENCE_KEYS, DraftEntry
from app.domain.people import PersonSummary
from app.domain.sessions import Session
from app.domain.tidy import ProposalEntry
from app.shapes import CaptureSettings, MemoryOut, PruneOut, StoreOut, render_prune

if TYPE_CHECKING:
    from app.services.learning import RememberResult
    from app.services.lifecycle import PruneReport
    from app.services.search import SearchResponse
    from app.services.transfer import ImportReport


class BatchOut(BaseModel):
    results: list[StoreOut]


class MemoryPage(BaseModel):
    memories: list[MemoryOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )


class RememberOut(BaseModel):
    status: Literal["stored", "reinforced"]
    message: str
    memory: MemoryOut
    may_supersede: UUID | None = None


class RecallOut(BaseModel):
    text: str = Field(description="To hand the agent as is; empty when nothing cleared the gate.")
    ids: list[UUID] = Field(description="The memories in it, best first.")


class DraftOut(BaseModel):
    text: str
    files: list[str]


class DraftsOut(BaseModel):
    drafts: list[DraftOut]
    sources: list[str] = Field(
        default_factory=list,
        description="The untrusted sources the session read (a memory kept from a draft"
        " carries them, and by UNTRUSTED_MEMORIES waits for a person's review).",
    )


class QueuedOut(BaseModel):
    queued: list[UUID] = Field(description="The drafts queued by this call.")
    known: int = Field(description="Drafts queued before (by an earlier import): left as they are.")
    refused: list[RefusedDraftOut] = Field(
        description="Drafts that held what looks like a secret: never stored (with"
        " SECRETS_POLICY=redact they are queued redacted instead)."
    )
    held: int = Field(
        description="Drafts that say what a live memory already says (of their repository,"
        " or global): passed over."
    )


class RefusedDraftOut(BaseModel):
    index: int
    reason: str


class QueuedDraftOut(BaseModel):
    id: UUID
    kind: str
    text: str
    files: list[str]
    source_repo: str | None = Field(
        description="Its repository; null for a rule of a person's own file (in their home)."
    )
    client: str
    client_session: str = Field(
        description="The client's own id of the session; for a rule of a file (client"
        " `file`), the file."
    )
    seen_at: datetime = Field(description="When the session did it (a file: its last change).")
    sources: list[str] = Field(description="The untrusted input the session had read by then.")
    status: Literal["pending", "kept", "dropped"]
    queued_at: datetime
    decided_at: datetime | None
    memory_id: UUID | None = Field(description="The memory a kept draft became.")
    evidence: dict[str, str] = Field(
        description=f"What the session showed ({', '.join(EVIDENCE_KEYS)}), as queued, in"
        " that order; {} when none."
    )
    key: str | None = Field(description="The client's own key for the same lesson, if sent.")
    personal: bool = Field(
        default=False,
        description="Its person's own: only they see it, and keep it as a personal memory.",
    )

    @classmethod
    def of(cls, entry: DraftEntry) -> QueuedDraftOut:
        return cls.model_validate(asdict(entry))


class DraftQueueOut(BaseModel):
    drafts: list[QueuedDraftOut]
    next_cursor: str | None = None


class WrittenOut(BaseModel):
    unwritten: int = Field(
        description="The scope's drafts of rules (kept or pending) that its files no longer hold."
    )
    proposed: int = Field(
        description="Memories kept from those rules, proposed for retirement now (GET"
        " /proposals, kind `unwritten`); one proposed before is not proposed again."
    )
    pending: list[UUID] = Field(
        description="Of those drafts, the ones still waiting for review (drop them: POST"
        " /drafts/drop)."
    )
    more: bool = Field(description="More than one call weighs: the rest at the next call.")
    withdrawn: int = Field(
        description="Pending retirement proposals taken back: their rule is written again."
    )


class StandingOut(BaseModel):
    source_repo: str
    markdown: str = Field(
        description="The section's lines, every memory's text a quoted literal; the same"
        " memories give the same text."
    )
    memory_ids: list[str] = Field(description="The memories it shows, in its order.")
    left_out: int = Field(description="Standing memories the budget left out.")


class DroppedOut(BaseModel):
    dropped: list[UUID] = Field(description="The pending drafts among those named, now dropped.")


class ProposalOut(BaseModel):
    id: UUID
    kind: Literal["merge", "replace", "retire", "unwritten"]
    memory_ids: list[UUID] = Field(
        description="merge, replace: the memory kept first, then those superseded by it;"
        " retire, unwritten (its rule deleted from its file): the memory archived."
    )
    source_repo: str | None
    similarity: float | None = Field(description="The nearest pair's cosine (merge, replace).")
    reason: str
    status: Literal["pending", "accepted", "dismissed"]
    created_at: datetime
    decided_at: datetime | None

    @classmethod
    def of(cls, row: ProposalEntry) -> ProposalOut:
        return cls.model_validate(asdict(row))


class ShownProposalOut(ProposalOut):
    memories: list[MemoryOut] = Field(description="Its memories, in `memory_ids`' order.")


class ProposalsOut(BaseModel):
    proposals: list[ShownProposalOut]
    not_listed: dict[str, int] = Field(
        description="Pending proposals of the kinds not asked for (by default, those not"
        " measured right nine times in ten), by kind: ask with `kind=`."
    )


class ComputedOut(BaseModel):
    memories: int = Field(description="Live memories weighed (at most).")
    found: dict[str, int] = Field(description="Proposals found, by kind.")
    saved: int = Field(description="Of those, new, or back (dismissed, their memories changed).")
    seconds: float


class SourcesHeldOut(BaseModel):
    sources: int = Field(description="How many untrusted sources the session holds now.")


class DraftsHeldOut(BaseModel):
    held: int = Field(description="How many drafts the session holds now (its newest).")


class FileDeltaOut(BaseModel):
    path: str
    diff: str


class RetryContextOut(BaseModel):
    task_summary: str
    plan_summary: str
    latest_error: str
    changed_files: list[FileDeltaOut]
    diagnosis: dict[str, Any] | None
    attempt_number: int
    estimated_tokens: int
    saved_tokens: int
    saved_percent: float


class SupersedeOut(BaseModel):
    superseded: MemoryOut
    replacement: StoreOut


class SessionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: UUID
    source_repo: str | None
    agent: str | None
    task: str | None
    status: str
    summary: str | None
    key_changes: list[dict[str, Any]]
    started_at: datetime
    ended_at: datetime | None
    git_branch: str | None = None
    git_commit: str | None = None


class SessionStartOut(BaseModel):
    session_id: UUID
    session: SessionOut
    pruning: PruneOut | None = Field(description="null when pruning failed; the session started")
    capture: CaptureSettings
    marked_stale: int = Field(
        default=0, description="Memories about the changed files, now marked possibly stale."
    )


class KeyOut(BaseModel):
    """An API key's record; never the key itself."""

    model_config = ConfigDict(from_attributes=True)

    id: UUID
    tenant_id: str
    name: str
    role: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None
    person_id: UUID | None = Field(default=None, description="The person it acts for.")


class RevokedKeyOut(KeyOut):
    note: str | None = Field(
        default=None, description="What the revocation leaves (the tenant's last admin key)"
    )


class PersonOut(BaseModel):
    """A person, as an admin sees them: their keys, and how many personal memories they
    hold (counted, never shown)."""

    id: UUID
    name: str
    created_at: datetime
    active_keys: int
    personal_memories: int

    @classmethod
    def of(cls, summary: PersonSummary) -> PersonOut:
        person = summary.person
        return cls(
            id=person.id,
            name=person.name,
            created_at=person.created_at,
            active_keys=summary.active_keys,
            personal_memories=summary.personal_memories,
        )


class RemovedPersonOut(BaseModel):
    id: UUID
    name: str
    keys_revoked: int
    personal_memories_deleted: int = Field(description="Their team memories stay.")


class NewKeyOut(KeyOut):
    key: str = Field(description="Shown once; only its hash is stored.")


def render_session(session: Session) -> SessionOut:
    return SessionOut.model_validate(session)


def render_session_start(
    session: Session, pruning: PruneReport | None, capture: dict[str, Any], marked_stale: int = 0
) -> SessionStartOut:
    return SessionStartOut(
        session_id=session.id,
        session=render_session(session),
        pruning=render_prune(pruning) if pruning else None,
        capture=CaptureSettings(**capture),
        marked_stale=marked_stale,
    )


def render_remember(result: RememberResult) -> RememberOut:
    return RememberOut(
        status=result.outcome.status,
        message=result.message,
        memory=MemoryOut.of(result.outcome.memory),
        may_supersede=result.outcome.may_supersede,
    )


class CompactHitOut(BaseModel):
    id: str
    type: str
    trust: str = Field(description="Who stands behind it: agent, user or system.")
    marks: list[str] = Field(
        description='"global" (filed under no repository), "possibly-stale" (a file it is'
        " about changed since: verify, then confirm or supersede it)."
    )
    score: float
    age: str = Field(description='How long ago it was stored: "45m", "3h", "2d", "5mo", "1y".')
    tags: list[str]
    content: str
    context: str | None = Field(description="Cut to what fits the compact size.")


class CompactSearchOut(BaseModel):
    results: list[CompactHitOut]
    left_out: int = Field(description="Matches left out to fit max_tokens.")
    below_floor: int
    note: str | None = None
    truncated: str | None = None
    degraded: str | None = None


def render_compact_json(
    response: SearchResponse, now: datetime, max_tokens: int | None
) -> CompactSearchOut:
    """The compact form as JSON (REST): the same hits and budget as the text form."""
    hits = compact_hits(response, now)
    packed = pack(hits, max_tokens)
    shown = hits[: len(packed.lines)]
    return CompactSearchOut(
        results=[
            CompactHitOut(
                id=h.id,
                type=h.type,
                trust=h.trust,
                marks=list(h.marks),
                score=h.score,
                age=h.age,
                tags=list(h.tags),
                content=h.content,
                context=h.cut_context(),
            )
            for h in shown
        ],
        left_out=packed.left_out,
        below_floor=response.below_floor,
        note=response.note,
        truncated=response.truncated,
        degraded=response.degraded,
    )


class ImportOut(BaseModel):
    memories: int = Field(description="Lines imported (the header not counted).")
    stored: int = Field(description="New memories.")
    reinforced: int = Field(description="Known content: reinforced, not duplicated.")
    already_here: int = Field(
        default=0,
        description="The same memory (its id and content) already here: nothing changed, so"
        " a backup restored twice counts no observation twice.",
    )
    reembedded: int = Field(description="Lines whose vectors this server's model made.")
    linked: int = Field(description="Supersede links restored.")
    unresolved_links: int = Field(description="Links to a memory neither in the file nor here.")
    sessions: int = Field(default=0, description="Sessions new here.")
    quarantined: int = Field(
        description="Lines kept quarantined: marked so in the file, or whose content does not"
        " match the content_hash they carry. No agent is handed them."
    )


def render_import(report: ImportReport) -> ImportOut:
    return ImportOut(**asdict(report))
