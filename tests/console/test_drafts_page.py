"""The Drafts page over HTTP: each draft whole in its text box with its evidence, session and
the untrusted input its session read, all shown as text; near-duplicates together, the first
kept and the rest dropped in one click; many kept or dropped at once; an unchanged text is
kept as drafted, a changed one as a rewrite. (test_console_browser.py presses the same
buttons in Chromium.)"""

from __future__ import annotations

import html
import re
from typing import Any

import asyncpg
import httpx
import pytest
from markupsafe import escape

from app.domain.drafts import MAX_QUEUE_PAGE, MAX_QUEUED_A_CALL
from app.services.keys import KeyService
from tests.helpers.console import csrf_of, signed_in

pytestmark = pytest.mark.citus

SCRIPT = "<script>alert('pwned')</script>"
BASE: dict[str, Any] = {"source_repo": "acme/api", "client": "claude-code", "client_session": "s-1",
        "seen_at": "2026-10-02T14:03:11+00:00"}  # fmt: skip
FIX: dict[str, Any] = {
    **BASE,
    "kind": "fix",
    "text": f"`make test` failed with: ImportError {SCRIPT}.\nIt passed after changing helper.py.",
    "files": ["helper.py"],
    "sources": ["https://example.com/<b>guide</b>"],
    "evidence": {
        "error": f"ImportError: cannot import name 'helper' {SCRIPT}",
        "change": "helper.py: def helper() added",
        "command": "make test",
    },
}
RULE: dict[str, Any] = {**BASE, "kind": "instruction", "client_session": "s-2",
        "text": "Never edit the generated files; always use the make target instead.",
        "evidence": {"said": "no, don't touch generated files, use the make target"}}  # fmt: skip
RULE_AGAIN: dict[str, Any] = {**RULE, "client_session": "s-3",
              "text": "Don't edit generated files by hand, use the make target."}  # fmt: skip
OTHER: dict[str, Any] = {
    **RULE,
    "client_session": "s-4",
    "text": "Always open a pull request; never push to main.",
}


async def queued(base: str, key: str, *drafts: dict[str, Any]) -> list[str]:
    async with httpx.AsyncClient(base_url=base) as api:
        done = await api.post(
            "/drafts", json={"drafts": list(drafts)}, headers={"Authorization": f"Bearer {key}"}
        )
    assert done.status_code == 201, done.text
    ids: list[str] = done.json()["queued"]
    assert len(ids) == len(drafts)
    return ids


@pytest.fixture
async def admin(served: str, db: asyncpg.Connection) -> str:
    return (await KeyService.on_connection(db).create("team", "owner", "admin")).key


def article(page: str, draft_id: str) -> str:
    found = re.search(rf'<article class="draft" id="draft-{draft_id}">.*?</article>', page, re.S)
    assert found, f"no draft {draft_id} on the page"
    return found.group(0)


async def test_each_draft_whole_with_its_evidence_and_session_as_text(
    served: str, db: asyncpg.Connection, admin: str
) -> None:
    reader = (await KeyService.on_connection(db).create("team", "viewer", "reader")).key
    (fix_id,) = await queued(served, admin, FIX)
    async with httpx.AsyncClient(base_url=served) as http:
        await signed_in(http, admin)
        page = (await http.get("/console/drafts")).text
        shown = article(page, fix_id)
        # The whole text in its box, as text.
        box = re.search(r"<textarea[^>]*>(.*?)</textarea>", shown, re.S)
        assert box and html.unescape(box.group(1)) == FIX["text"]
        assert SCRIPT not in page and str(escape(SCRIPT)) in shown
        evidence = re.findall(r"<dt>(.*?)</dt><dd><pre>(.*?)</pre></dd>", shown, re.S)
        assert [(label, html.unescape(text)) for label, text in evidence] == [
            ("error", FIX["evidence"]["error"]),
            ("changed", FIX["evidence"]["change"]),
            ("passes now", "make test"),
        ]
        session = re.search(r'id="session-[^"]+">(.*?)</p>', shown, re.S)
        assert (
            session and "claude-code session <code>s-1</code>, 2026-10-02 14:03" in session.group(1)
        )
        assert "<code>helper.py</code>" in session.group(1)
        assert "<code>https://example.com/&lt;b&gt;guide&lt;/b&gt;</code>" in shown
        assert 'id="keep-picked"' in page and f'id="pick-{fix_id}"' in shown

        await http.post("/console/sign-out", data={"csrf_token": csrf_of(page)})
        await signed_in(http, reader)
        page = (await http.get("/console/drafts")).text
    shown = article(page, fix_id)
    assert "<textarea" not in page and "<button" not in shown and 'id="keep-picked"' not in page
    assert str(escape(FIX["text"])) in shown and "passes now" in shown


async def test_near_duplicates_together_the_first_kept_the_rest_dropped(
    served: str, db: asyncpg.Connection, admin: str
) -> None:
    other_id, again_id, rule_id = await queued(served, admin, OTHER, RULE_AGAIN, RULE)
    async with httpx.AsyncClient(base_url=served) as http:
        await signed_in(http, admin)
        page = (await http.get("/console/drafts")).text
        # Newest first (one seen_at: by id), the near ones in one group led by its first.
        group = re.search(r'<section class="group" id="group-([^"]+)">(.*?)</section>', page, re.S)
        assert group, page
        leader = group.group(1)
        grouped = re.findall(r'<article class="draft" id="draft-([^"]+)"', group.group(2))
        assert set(grouped) == {again_id, rule_id} and grouped[0] == leader
        assert other_id not in group.group(2)
        (follower,) = set(grouped) - {leader}
        keep_first = re.search(
            rf'<form [^>]*action="/console/drafts/{leader}/keep".*?</form>', page, re.S
        )
        assert keep_first and f'name="rest" value="{follower}"' in keep_first.group(0)
        text = next(
            d for d in (RULE, RULE_AGAIN) if d["text"] in html.unescape(article(page, leader))
        )
        pressed = await http.post(
            f"/console/drafts/{leader}/keep",
            data={"csrf_token": csrf_of(page), "text": text["text"], "drop_rest": "on",
                  "rest": [follower]},
        )  # fmt: skip
        assert pressed.status_code == 303, pressed.text
        after = (await http.get("/console/drafts")).text
    statuses = {r["id"]: r["status"] for r in await db.fetch("SELECT id::text, status FROM drafts")}
    assert statuses == {leader: "kept", follower: "dropped", other_id: "pending"}
    assert 'class="group"' not in after and "1 draft waits" in after
    trail = await db.fetch("SELECT action FROM audit_log WHERE action LIKE 'draft%' ORDER BY at")
    assert [r["action"] for r in trail] == ["draft_import", "draft_keep", "draft_drop"]


async def test_a_text_kept_unchanged_is_as_drafted_and_a_changed_one_a_rewrite(
    served: str, db: asyncpg.Connection, admin: str
) -> None:
    fix_id, rule_id = await queued(served, admin, FIX, RULE)
    async with httpx.AsyncClient(base_url=served) as http:
        await signed_in(http, admin)
        token = csrf_of((await http.get("/console/drafts")).text)
        # A browser sends a textarea's lines as CRLF.
        as_sent = FIX["text"].replace("\n", "\r\n")
        for draft_id, text in (
            (fix_id, as_sent),
            (rule_id, "Run `make gen`; never edit its output."),
        ):
            pressed = await http.post(
                f"/console/drafts/{draft_id}/keep", data={"csrf_token": token, "text": text}
            )
            assert pressed.status_code == 303, pressed.text
    edited = await db.fetch(
        "SELECT detail->>'draft' AS draft, detail->>'edited' AS edited FROM audit_log"
        " WHERE action = 'draft_keep' ORDER BY at"
    )
    assert [(r["draft"], r["edited"]) for r in edited] == [(fix_id, "false"), (rule_id, "true")]
    contents = {r["content"] for r in await db.fetch("SELECT content FROM memories")}
    assert contents == {FIX["text"], "Run `make gen`; never edit its output."}


async def test_many_kept_or_dropped_at_once(
    served: str, db: asyncpg.Connection, admin: str
) -> None:
    fix_id, rule_id, other_id = await queued(served, admin, FIX, RULE, OTHER)
    async with httpx.AsyncClient(base_url=served) as http:
        await signed_in(http, admin)
        token = csrf_of((await http.get("/console/drafts")).text)
        kept = await http.post(
            "/console/drafts/picked",
            data={"csrf_token": token, "action": "keep", "draft": [fix_id, other_id]},
        )
        assert kept.status_code == 303, kept.text
        # A draft decided since the page was read is passed over, as a drop passes it.
        dropped = await http.post(
            "/console/drafts/picked",
            data={"csrf_token": token, "action": "drop", "draft": [rule_id, fix_id]},
        )
        assert dropped.status_code == 303, dropped.text
        nothing = await http.post(
            "/console/drafts/picked", data={"csrf_token": token, "action": "keep"}
        )
        assert nothing.status_code == 422 and "1 to 100 drafts" in nothing.text
        unknown = await http.post(
            "/console/drafts/picked",
            data={"csrf_token": token, "action": "merge", "draft": [fix_id]},
        )
        # An action the form does not offer: its field refused, as any bad input is.
        assert unknown.status_code == 422 and "action must be one of: keep, drop" in unknown.text
        forged = await http.post(
            "/console/drafts/picked", data={"action": "drop", "draft": [fix_id]}
        )
        assert forged.status_code == 403
    statuses = {r["id"]: r["status"] for r in await db.fetch("SELECT id::text, status FROM drafts")}
    assert statuses == {fix_id: "kept", other_id: "kept", rule_id: "dropped"}
    memories = await db.fetch("SELECT content, trust_level FROM memories ORDER BY content")
    assert [(m["content"], m["trust_level"]) for m in memories] == sorted(
        [(OTHER["text"], "user"), (FIX["text"], "user")]
    )


async def test_the_count_says_when_the_page_is_not_the_whole_queue(served: str, admin: str) -> None:
    """The page shows the newest MAX_QUEUE_PAGE drafts: with more waiting it says it shows a
    page of them, never that its count is all that waits."""
    many = [{**OTHER, "client_session": f"s-many-{i}", "text": f"Rule {i}: {OTHER['text']}"}
            for i in range(MAX_QUEUE_PAGE + 1)]  # fmt: skip
    await queued(served, admin, *many[:MAX_QUEUED_A_CALL])
    await queued(served, admin, *many[MAX_QUEUED_A_CALL:])
    async with httpx.AsyncClient(base_url=served) as http:
        await signed_in(http, admin)
        page = (await http.get("/console/drafts")).text
        count = re.search(r'<p class="meta" id="queue-count">(.*?)</p>', page, re.S)
        assert count and count.group(1) == (
            f"More drafts wait than a page shows: the newest {MAX_QUEUE_PAGE} are here;"
            " keep or drop these to see the rest."
        )
        # The filter's box as every console page takes it: blank filters nothing.
        blank = (await http.get("/console/drafts", params={"source_repo": "  "})).text
        filtered = (await http.get("/console/drafts", params={"source_repo": "acme/web"})).text
    assert count.group(0) in blank
    assert '<p class="meta" id="queue-count">0 drafts wait.</p>' in filtered


async def test_a_rule_of_a_persons_own_file_says_where_it_is_written(
    served: str, admin: str
) -> None:
    """`agent-memory import-files`: a draft of no repository, its file for a session."""
    own = {
        "kind": "instruction", "text": "Answer in British English, always.", "source_repo": None,
        "client": "file", "client_session": "~/.claude/CLAUDE.md",
        "seen_at": "2026-11-02T10:00:00+00:00",
        "evidence": {"written": "~/.claude/CLAUDE.md:3 under “Me”"},
        "key": "rule|answer in british english always",
    }  # fmt: skip
    (draft_id,) = await queued(served, admin, own)
    async with httpx.AsyncClient(base_url=served) as http:
        await signed_in(http, admin)
        shown = article((await http.get("/console/drafts")).text, draft_id)
    assert '<span class="repo">global</span>' in shown
    session = re.search(r'id="session-[^"]+">(.*?)</p>', shown, re.S)
    assert session and (
        "written in <code>~/.claude/CLAUDE.md</code>, changed 2026-11-02 10:00" in session.group(1)
    )
    evidence = re.findall(r"<dt>(.*?)</dt><dd><pre>(.*?)</pre></dd>", shown, re.S)
    assert [(label, html.unescape(text)) for label, text in evidence] == [
        ("written in", "~/.claude/CLAUDE.md:3 under “Me”")
    ]
