"""The console's pages: search, browse, a memory, stats, sessions, strategies; and the
admin's buttons (archive, restore, pin, delete, prune). Every page goes through the same
services and tenant scope as the API, so a key sees its own tenant only and its role
decides what it may press. The drafts pages are drafts.py's, included here; what every
page shares is pages.py's."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import Form, Query, Request, Response

from app.console import drafts, oauth, oidc
from app.console.pages import (
    PAGE_SIZE,
    SECURITY_HEADERS,
    STATIC_URL,
    RuntimeDep,
    Text,
    back_to,
    blank_to_none,
    console_router,
    page,
    services_of,
    static_files,
)
from app.console.signin import (
    KEY_COOKIE,
    after_sign_in,
    check_csrf,
    set_cookies,
    sign_out,
    signed_in,
)
from app.domain.audit import UNDOABLE, AuditQuery
from app.domain.errors import AppError, NotFoundError
from app.domain.filters import FilterDraft
from app.domain.inputs import ListDraft, MemoryDraft, SearchDraft
from app.domain.memory import Memory
from app.domain.sessions import SessionEnd
from app.domain.snapshot import render_markdown
from app.domain.tidy import (
    ARCHIVING_KINDS,
    MAX_PROPOSALS_PAGE,
    MEASURED_PRECISION,
    PROPOSAL_KINDS,
    SHOWN_BY_DEFAULT,
)
from app.services.scope import Services

# What main.py mounts and tests read, from here as before.
__all__ = ["SECURITY_HEADERS", "STATIC_URL", "router", "static_files"]

router = console_router()

# The memories an audit entry names on its row (the rest are counted: "+2").
MEMORIES_AN_ENTRY_SHOWS = 3


# Sign-in and sign-out.


@router.get("/console/sign-in")
async def sign_in_page(
    request: Request,
    runtime: RuntimeDep,
    next_page: Annotated[str, Query(alias="next", max_length=300)] = "",
) -> Response:
    """`next`: where to go once signed in (a client's consent page), on this console only."""
    principal = await signed_in(request, runtime)
    if principal is not None and request.cookies.get(KEY_COOKIE):
        return back_to(after_sign_in(next_page))
    shown = {
        "open": principal is not None,
        "next": after_sign_in(next_page),
        "provider": runtime.identity_provider,
    }
    return page(request, "sign_in.html", shown)


@router.post("/console/sign-in")
async def sign_in(
    request: Request,
    runtime: RuntimeDep,
    api_key: Annotated[str, Form(max_length=200)],
    csrf_token: Annotated[str, Form(max_length=100)] = "",
    next_page: Annotated[str, Form(alias="next", max_length=300)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    try:
        address = request.client.host if request.client else None
        principal = await runtime.authenticator.authenticate(api_key.strip() or None, address)
    except AppError as exc:
        shown = {
            "error": exc.detail,
            "next": after_sign_in(next_page),
            "provider": runtime.identity_provider,
        }
        return page(request, "sign_in.html", shown, exc.status)
    response = back_to(after_sign_in(next_page))
    set_cookies(request, response, key=api_key.strip())
    request.state.principal = principal
    return response


@router.post("/console/sign-out")
async def sign_out_now(
    request: Request, runtime: RuntimeDep, csrf_token: Annotated[str, Form(max_length=100)] = ""
) -> Response:
    check_csrf(request, csrf_token)
    response = back_to("/console/sign-in")
    await sign_out(request, response, runtime)
    return response


# Pages.

Flag = Annotated[bool, Query()]


@router.get("/")
async def search_page(
    request: Request,
    runtime: RuntimeDep,
    q: Text = None,
    source_repo: Text = None,
    memory_type: Text = None,
    weak: Flag = False,
    archived: Flag = False,
    person_id: Text = None,
) -> Response:
    """Search with each hit's score parts; an empty query lists the newest."""
    repo, kind, person = (
        blank_to_none(source_repo),
        blank_to_none(memory_type),
        blank_to_none(person_id),
    )
    draft = SearchDraft(
        q=q or "",
        filter=FilterDraft(
            source_repo=repo,
            memory_type=[kind] if kind else None,
            include_archived=archived,
            person_id=person,
        ),
        limit=PAGE_SIZE,
        track_access=False,  # an owner looking is not an agent using it
        floor=not weak,
    )
    async with services_of(request, runtime) as services:
        response = await services.search.search(draft)
        people = await services.people.names(services.principal.tenant_id)
    form = {"q": q or "", "source_repo": repo or "", "memory_type": kind or "", "person_id": person}
    return page(
        request,
        "search.html",
        {
            "nav": "search",
            "form": form,
            "weak": weak,
            "archived": archived,
            "response": response,
            "people": people,
        },
    )


@router.get("/console/browse")
async def browse_page(
    request: Request,
    runtime: RuntimeDep,
    source_repo: Text = None,
    memory_type: Text = None,
    archived: Flag = False,
    quarantined: Flag = False,
    person_id: Text = None,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    """By repository, type and who wrote it, newest first, a page at a time (keyset: stable
    under writes); an admin may list the quarantined ones too (marked)."""
    repo, kind, person = (
        blank_to_none(source_repo),
        blank_to_none(memory_type),
        blank_to_none(person_id),
    )
    kept = FilterDraft(
        source_repo=repo,
        memory_type=[kind] if kind else None,
        include_archived=archived,
        include_quarantined=quarantined,
        person_id=person,
    )
    draft = ListDraft(kept, PAGE_SIZE, cursor)
    async with services_of(request, runtime) as services:
        listed = await services.memories.list_page(draft)
        people = await services.people.names(services.principal.tenant_id)
    form = {"source_repo": repo or "", "memory_type": kind or "", "person_id": person}
    return page(
        request,
        "browse.html",
        {
            "nav": "browse",
            "form": form,
            "archived": archived,
            "quarantined": quarantined,
            "listed": listed,
            "people": people,
        },
    )


@router.get("/console/memories/{memory_id:uuid}")
async def memory_page(request: Request, runtime: RuntimeDep, memory_id: UUID) -> Response:
    """One memory whole: its history (what it replaced and what replaced it), its use,
    its provenance and integrity; an admin's buttons."""
    async with services_of(request, runtime) as services:
        # The console is a person's tool: an admin sees a quarantined memory, marked.
        memory = await services.memories.get(memory_id, services.principal.can("admin"))
        older, newer = await services.memories.lineage(memory_id)
        people = await services.people.names(services.principal.tenant_id)
    return page(
        request,
        "memory.html",
        {"nav": "browse", "memory": memory, "older": older, "newer": newer, "people": people},
    )


ACTIONS = ("archive", "restore", "pin", "unpin", "delete", "confirm", "approve")


# The specific memory actions first: the generic one below would take their paths.


@router.post("/console/memories/{memory_id:uuid}/edit")
async def memory_edit(
    request: Request,
    runtime: RuntimeDep,
    memory_id: UUID,
    csrf_token: Annotated[str, Form(max_length=100)] = "",
    tags: Annotated[str, Form(max_length=4000)] = "",
    category: Annotated[str, Form(max_length=1000)] = "",
    pinned: Annotated[str, Form(max_length=10)] = "",
) -> Response:
    """Tags (comma-separated), category and pinned, as the caller's role allows."""
    check_csrf(request, csrf_token)
    changes = {
        "tags": [t.strip() for t in tags.split(",") if t.strip()],
        "category": category.strip() or None,
        "pinned": pinned == "on",
    }
    async with services_of(request, runtime) as services:
        await services.lifecycle.edit(memory_id, changes)
    return back_to(f"/console/memories/{memory_id}")


@router.post("/console/memories/{memory_id:uuid}/supersede")
async def memory_supersede(
    request: Request,
    runtime: RuntimeDep,
    memory_id: UUID,
    content: Annotated[str, Form(max_length=100_000)],
    csrf_token: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    """Replace the memory with corrected content (the old one stays, linked, in history)."""
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        old = await services.memories.get(memory_id)
        # A person's own correction: theirs to vouch for where the key may (never held).
        draft = MemoryDraft(
            content=content, memory_type=old.memory_type, tags=old.tags, category=old.category,
            source="console", trust_level=services.principal.own_words_trust,
        )  # fmt: skip
        _, outcome = await services.lifecycle.supersede(memory_id, draft)
    return back_to(f"/console/memories/{outcome.memory.id}")


@router.post("/console/memories/{memory_id:uuid}/{action}")
async def memory_action(
    request: Request,
    runtime: RuntimeDep,
    memory_id: UUID,
    action: str,
    csrf_token: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    if action not in ACTIONS:
        raise NotFoundError(f"no action {action[:40]!r}")
    async with services_of(request, runtime) as services:
        if action == "archive":
            await services.lifecycle.archive(memory_id)
        elif action == "restore":
            await services.lifecycle.restore(memory_id)
        elif action in ("pin", "unpin"):
            changes = {"pinned": action == "pin"}
            await services.lifecycle.edit(memory_id, changes)
        elif action == "confirm":
            await services.lifecycle.confirm(memory_id)
        elif action == "approve":
            await services.lifecycle.approve(memory_id)
            return back_to("/console/review")
        else:
            await services.memories.delete(memory_id)
            return back_to("/console/browse")
    return back_to(f"/console/memories/{memory_id}")


@router.post("/console/sessions/{session_id:uuid}/{action}")
async def session_action(
    request: Request,
    runtime: RuntimeDep,
    session_id: UUID,
    action: str,
    csrf_token: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    if action not in ("end", "delete"):
        raise NotFoundError(f"no action {action[:40]!r}")
    async with services_of(request, runtime) as services:
        if action == "end":
            # Its owner closed it; the agent reported nothing: not a result for the snapshot.
            ended = SessionEnd(status="abandoned", summary="ended by its owner from the console")
            await services.sessions.end(session_id, ended)
        else:
            await services.sessions.delete(session_id)
    return back_to("/console/sessions")


@router.get("/console/keys")
async def keys_page(request: Request, runtime: RuntimeDep) -> Response:
    """This tenant's keys and people (admins): create a key (shown once) for a person,
    revoke one; remove a person, or delete their personal memories unread."""
    async with services_of(request, runtime) as services:
        shown = await _keys_and_people(services)
    return page(request, "keys.html", {**shown, "created": None})


async def _keys_and_people(services: Services) -> dict[str, Any]:
    tenant = services.principal.tenant_id
    return {
        "nav": "keys",
        "keys": await services.keys.list(tenant),
        "people": await services.people.list(tenant),
        "names": await services.people.names(tenant),
    }


@router.post("/console/keys")
async def key_create(
    request: Request,
    runtime: RuntimeDep,
    name: Annotated[str, Form(max_length=1000)],
    role: Annotated[str, Form(max_length=20)],
    csrf_token: Annotated[str, Form(max_length=100)] = "",
    person: Annotated[str, Form(max_length=1000)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        first_key = services.principal.key_id is None  # made in open mode: it ends it
        created = await services.keys.create(
            services.principal.tenant_id, name, role, blank_to_none(person)
        )
        listed = await _keys_and_people(services)
    # Shown once, on this answer only (no-store): it is never stored but as a hash.
    shown = {**listed, "created": created, "first_key": first_key}
    if first_key:
        shown["open_mode"] = False  # no longer: the banner would say the opposite
    return page(request, "keys.html", shown, 201)


@router.post("/console/keys/{key_id:uuid}/revoke")
async def key_revoke(
    request: Request,
    runtime: RuntimeDep,
    key_id: UUID,
    csrf_token: Annotated[str, Form(max_length=100)] = "",
    force: Annotated[str, Form(max_length=10)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.keys.revoke(services.principal.tenant_id, key_id, force == "on")
    return back_to("/console/keys")


@router.post("/console/people/{person_id:uuid}/{action}")
async def person_action(
    request: Request,
    runtime: RuntimeDep,
    person_id: UUID,
    action: Literal["remove", "forget"],
    csrf_token: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    """Remove a person (keys revoked, personal memories deleted), or delete only their
    personal memories, unread."""
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        person = await services.people.get(services.principal.tenant_id, person_id)
        if person is None or person.removed_at is not None:
            raise NotFoundError(f"person {person_id} not found")
        if action == "remove":
            await services.people.remove(person)
        else:
            await services.people.delete_personal(person)
    return back_to("/console/keys")


@router.get("/console/stats")
async def stats_page(request: Request, runtime: RuntimeDep, source_repo: Text = None) -> Response:
    """Counts, health, most used; for an admin, what the next prune would archive."""
    repo = blank_to_none(source_repo)
    async with services_of(request, runtime) as services:
        stats = await services.stats.stats(repo)
        preview = None
        would_archive: list[Memory] = []
        if services.principal.can("admin"):
            preview = await services.lifecycle.prune(repo, dry_run=True)
            would_archive = await services.memories.get_many(preview.ids[:PAGE_SIZE])
    return page(
        request,
        "stats.html",
        {
            "nav": "stats",
            "form": {"source_repo": repo or ""},
            "stats": stats,
            "preview": preview,
            "would_archive": would_archive,
        },
    )


@router.post("/console/prune")
async def prune_now(
    request: Request,
    runtime: RuntimeDep,
    csrf_token: Annotated[str, Form(max_length=100)] = "",
    source_repo: Annotated[str, Form(max_length=1000)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.lifecycle.prune(blank_to_none(source_repo), dry_run=False)
    return back_to("/console/stats")


@router.get("/console/audit")
async def audit_page(request: Request, runtime: RuntimeDep, memory_id: Text = None) -> Response:
    """Who changed what (admins), newest first, with undo where it applies."""
    wanted = UUID(memory_id) if memory_id and is_uuid(memory_id) else None
    async with services_of(request, runtime) as services:
        trail = await services.audit.entries(AuditQuery(memory_id=wanted, limit=PAGE_SIZE * 4))
        # Each entry's memories by their text (one read for the page), not 8 characters of
        # an id that memories written in the same minute share.
        named = {m for e in trail for m in e.memory_ids[:MEMORIES_AN_ENTRY_SHOWS]}
        texts = {m.id: m.content for m in await services.memories.get_many(list(named))}
    shown = {
        "nav": "audit", "entries": trail, "undoable": UNDOABLE, "memory_id": memory_id or "",
        "texts": texts, "memories_shown": MEMORIES_AN_ENTRY_SHOWS,
    }  # fmt: skip
    return page(request, "audit.html", shown)


@router.post("/console/audit/{entry_id:uuid}/undo")
async def audit_undo(
    request: Request,
    runtime: RuntimeDep,
    entry_id: UUID,
    csrf_token: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.audit.undo(entry_id)
    return back_to("/console/audit")


def is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


@router.get("/console/sessions")
async def sessions_page(
    request: Request, runtime: RuntimeDep, source_repo: Text = None
) -> Response:
    """Recent sessions with their summaries, and the snapshot an agent would get now."""
    repo = blank_to_none(source_repo)
    async with services_of(request, runtime) as services:
        sessions = await services.sessions.recent(repo, PAGE_SIZE)
        snapshot = await services.sessions.snapshot(repo, None)
    return page(
        request,
        "sessions.html",
        {
            "nav": "sessions",
            "form": {"source_repo": repo or ""},
            "sessions": sessions,
            "snapshot": render_markdown(snapshot),
        },
    )


@router.get("/console/review")
async def review_page(request: Request, runtime: RuntimeDep) -> Response:
    """The memories held for a person's review, oldest first, each with why and the
    sources its session read; an admin approves one here."""
    async with services_of(request, runtime) as services:
        held = await services.lifecycle.held()
    return page(request, "review.html", {"nav": "review", "held": held})


@router.get("/console/tidy")
async def tidy_page(request: Request, runtime: RuntimeDep, every_kind: Text = None) -> Response:
    """Tidy proposals (admins): merge, replace, retire, each accepted or dismissed in one
    click; the last decided, to undo. By default only the kinds measured right nine times
    in ten or more; "every kind" shows the rest."""
    kinds = PROPOSAL_KINDS if every_kind else None
    async with services_of(request, runtime) as services:
        pending = await services.tidy.pending(kinds, MAX_PROPOSALS_PAGE)
        not_listed = await services.tidy.not_listed(kinds)
        decided = await services.tidy.recently_decided(PAGE_SIZE)
    shown = {
        "nav": "tidy", "proposals": pending, "decided": decided, "every_kind": bool(every_kind),
        "not_listed": not_listed,
        "shown_by_default": SHOWN_BY_DEFAULT, "precision": MEASURED_PRECISION,
        "archiving": ARCHIVING_KINDS,
    }  # fmt: skip
    return page(request, "tidy.html", shown)


@router.post("/console/tidy/refresh")
async def tidy_refresh(
    request: Request, runtime: RuntimeDep, csrf_token: Annotated[str, Form(max_length=100)] = ""
) -> Response:
    check_csrf(request, csrf_token)
    async with services_of(request, runtime) as services:
        await services.tidy.refresh()
    return back_to("/console/tidy")


@router.post("/console/tidy/{proposal_id:uuid}/{action}")
async def tidy_action(
    request: Request,
    runtime: RuntimeDep,
    proposal_id: UUID,
    action: str,
    csrf_token: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    check_csrf(request, csrf_token)
    if action not in ("accept", "dismiss", "undo"):
        raise NotFoundError(f"no action {action[:40]!r}")
    async with services_of(request, runtime) as services:
        await getattr(services.tidy, action)(proposal_id)
    return back_to("/console/tidy")


@router.get("/console/strategies")
async def strategies_page(
    request: Request,
    runtime: RuntimeDep,
    source_repo: Text = None,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    """Learned strategies: how often search surfaced them (hints included), their feedback."""
    repo = blank_to_none(source_repo)
    draft = ListDraft(FilterDraft(source_repo=repo, memory_type=["strategy"]), PAGE_SIZE, cursor)
    async with services_of(request, runtime) as services:
        listed = await services.memories.list_page(draft)
    return page(
        request,
        "strategies.html",
        {"nav": "strategies", "form": {"source_repo": repo or ""}, "listed": listed},
    )


router.include_router(drafts.router)
router.include_router(oauth.router)
router.include_router(oidc.router)
