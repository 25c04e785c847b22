"""The console in a real browser: Debian's headless Chromium, driven through its
chromedriver. Signs in, searches, opens a memory, archives and restores it as an admin, and
checks that a reader sees no write button. Set SCREENSHOTS_DIR to keep a picture of each
page (docs/console/ holds the ones in the docs)."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import httpx

from app.domain.tidy import MEASURED_PRECISION
from app.services.keys import KeyService
from tests.helpers.browser import follow, needs_chromium, shot

pytestmark = needs_chromium

SCRIPT = "<script>document.title='pwned'</script> Rotate the staging database password monthly"


def sign_in(driver: Any, base: str, key: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/console/sign-in")
    driver.find_element(By.ID, "api_key").send_keys(key)
    follow(driver, driver.find_element(By.ID, "sign-in"))
    assert driver.current_url == f"{base}/", driver.current_url


def admin_journey(driver: Any, base: str, admin_key: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/")
    assert driver.current_url.endswith("/console/sign-in")  # keys exist: sign in first
    shot(driver, "sign-in")
    sign_in(driver, base, admin_key)
    assert driver.find_element(By.ID, "role").text == "admin"

    driver.find_element(By.ID, "q").send_keys("staging database password")
    follow(driver, driver.find_element(By.ID, "search"))
    rows = driver.find_elements(By.CSS_SELECTOR, "#results tbody tr")
    assert rows and "Rotate the staging database password" in rows[0].text
    # the score breakdown: score, keyword, vector, decayed, relevance
    numbers = rows[0].find_elements(By.CSS_SELECTOR, "td.num")
    assert len(numbers) == 5 and all(float(n.text) >= 0 for n in numbers)
    shot(driver, "search")

    follow(driver, rows[0].find_element(By.CSS_SELECTOR, "td.content a"))
    content = driver.find_element(By.ID, "content").text
    assert content.startswith("<script>")  # shown as text
    assert driver.title != "pwned"  # and never run
    shot(driver, "memory")

    follow(driver, driver.find_element(By.ID, "archive"))
    assert driver.find_element(By.ID, "archived-state").text == "archived"
    follow(driver, driver.find_element(By.ID, "restore"))
    assert not driver.find_elements(By.ID, "archived-state")
    assert driver.find_elements(By.ID, "archive")

    driver.get(f"{base}/console/stats")
    assert driver.find_element(By.ID, "counts").text.startswith("2")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#recent-days rect")) == 60
    shot(driver, "stats")
    driver.get(f"{base}/console/sessions")
    assert "Moved the staging secrets" in driver.find_element(By.ID, "sessions").text
    shot(driver, "sessions")
    driver.get(f"{base}/console/browse")
    shot(driver, "browse")


def reader_journey(driver: Any, base: str, reader_key: str, memory_id: str) -> None:
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    sign_in(driver, base, reader_key)
    driver.get(f"{base}/console/memories/{memory_id}")
    assert driver.find_element(By.ID, "content").text.startswith("<script>")
    assert driver.find_element(By.ID, "role").text == "reader"
    assert not driver.find_elements(By.ID, "admin-actions")
    assert not driver.find_elements(By.TAG_NAME, "button") or all(
        b.text == "Sign out" for b in driver.find_elements(By.TAG_NAME, "button")
    )


async def test_admin_and_reader_in_a_real_browser(
    served: str, db: asyncpg.Connection, browser: Any
) -> None:
    keys = KeyService.on_connection(db)
    admin = (await keys.create("team", "owner", "admin")).key
    reader = (await keys.create("team", "viewer", "reader")).key
    headers = {"Authorization": f"Bearer {admin}"}
    async with httpx.AsyncClient(base_url=served, headers=headers) as api:
        stored = await api.post(
            "/memories",
            json={"content": SCRIPT, "memory_type": "decision", "source_repo": "acme/api",
                  "tags": ["security", "ops"]},
        )  # fmt: skip
        await api.post(
            "/memories",
            json={"content": "Flaky upload test: a temp dir shared between tests; use tmp_path",
                  "memory_type": "error_pattern", "source_repo": "acme/api"},
        )  # fmt: skip
        session = (await api.post("/sessions", json={"source_repo": "acme/api"})).json()
        await api.post(
            f"/sessions/{session['session_id']}/end",
            json={"status": "completed", "summary": "Moved the staging secrets to the vault"},
        )
    memory_id = stored.json()["memory"]["id"]
    # The browser blocks; the server runs on this loop, so the browser gets a thread.
    await asyncio.to_thread(admin_journey, browser, served, admin)
    await asyncio.to_thread(reader_journey, browser, served, reader, memory_id)
    row = await db.fetchrow("SELECT archived_at, (SELECT count(*) FROM memory_access) AS counted"
                            " FROM memories WHERE id = $1", memory_id)  # fmt: skip
    assert row["archived_at"] is None  # archived, then restored
    assert row["counted"] == 0  # an owner looking is not an agent using it


def agent_journey(driver: Any, base: str, agent_key: str, memory_id: str, system_id: str) -> None:
    """An agent's key edits and supersedes its own memory; the operator's it may not."""
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    sign_in(driver, base, agent_key)
    driver.get(f"{base}/console/memories/{memory_id}")
    assert driver.title.startswith("Flaky upload test")  # titled by its content
    tags = driver.find_element(By.ID, "edit-tags")
    tags.clear()
    tags.send_keys("ci, flaky")
    driver.find_element(By.ID, "edit-category").send_keys("testing")
    follow(driver, driver.find_element(By.ID, "save"))
    assert "ci, flaky" in driver.find_element(By.TAG_NAME, "dl").text
    driver.find_element(By.ID, "supersede-content").send_keys(
        "Flaky upload test: tests shared a temp dir; each now takes tmp_path"
    )
    follow(driver, driver.find_element(By.ID, "supersede"))
    assert "each now takes tmp_path" in driver.find_element(By.ID, "content").text
    assert "replaced: " in driver.find_element(By.ID, "lineage").text
    # The operator's memory: the form is there, the service refuses the change.
    driver.get(f"{base}/console/memories/{system_id}")
    driver.find_element(By.ID, "edit-category").send_keys("hijacked")
    follow(driver, driver.find_element(By.ID, "save"))
    assert "may not" in driver.find_element(By.TAG_NAME, "main").text
    driver.get(f"{base}/console/keys")  # keys are an admin's
    assert "may not" in driver.find_element(By.TAG_NAME, "main").text


def admin_keys_journey(driver: Any, base: str, admin_key: str) -> str:
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    sign_in(driver, base, admin_key)
    driver.get(f"{base}/console/keys")
    driver.find_element(By.ID, "key-name").send_keys("ci bot")
    follow(driver, driver.find_element(By.ID, "create"))
    shown: str = driver.find_element(By.ID, "new-key-value").text
    assert shown.startswith("am_")
    driver.get(f"{base}/console/keys")  # shown once: a reload shows only its prefix
    assert shown not in driver.page_source
    revoke = next(
        b for b in driver.find_elements(By.CSS_SELECTOR, "#keys button")
        if "ci bot" in b.find_element(By.XPATH, "./ancestor::tr").text
    )  # fmt: skip
    follow(driver, revoke)
    row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "#keys tr") if "ci bot" in r.text)
    assert "revoked" in row.text
    return shown


async def test_console_actions_by_role_in_a_real_browser(
    served: str, db: asyncpg.Connection, browser: Any
) -> None:
    keys = KeyService.on_connection(db)
    admin = (await keys.create("team", "owner", "admin")).key
    agent = (await keys.create("team", "bot", "agent")).key
    async with httpx.AsyncClient(base_url=served) as api:
        mine = await api.post(
            "/memories",
            json={"content": "Flaky upload test: a temp dir shared between tests",
                  "memory_type": "error_pattern", "source_repo": None},
            headers={"Authorization": f"Bearer {agent}"},
        )  # fmt: skip
        rule = await api.post(
            "/memories",
            json={
                "content": "Releases are cut from main only",
                "trust_level": "system",
                "source_repo": None,
            },
            headers={"Authorization": f"Bearer {admin}"},
        )
    await asyncio.to_thread(
        agent_journey, browser, served, agent, mine.json()["memory"]["id"],
        rule.json()["memory"]["id"],
    )  # fmt: skip
    shown = await asyncio.to_thread(admin_keys_journey, browser, served, admin)
    assert await db.fetchval("SELECT revoked_at IS NOT NULL FROM api_keys WHERE name = 'ci bot'")
    assert shown not in {r["key_hash"] for r in await db.fetch("SELECT key_hash FROM api_keys")}
    assert (
        await db.fetchval(
            "SELECT category FROM memories WHERE content = 'Releases are cut from main only'"
        )
        is None
    )


def first_key_journey(driver: Any, base: str) -> str:
    """Open mode: the Keys page says the first key ends it and offers admin; once made, the
    key is shown once with the way to sign in, and the open-mode banner is gone."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    driver.get(f"{base}/console/keys")
    assert "first key ends open mode" in driver.find_element(By.ID, "first-key").text
    assert Select(driver.find_element(By.ID, "key-role")).first_selected_option.text == "admin"
    driver.find_element(By.ID, "key-name").send_keys("owner")
    follow(driver, driver.find_element(By.ID, "create"))
    key: str = driver.find_element(By.ID, "new-key-value").text
    ended = driver.find_element(By.ID, "open-mode-ended")
    assert "Open mode has ended" in ended.text
    assert not driver.find_elements(By.ID, "open-mode")  # the banner no longer says so
    follow(driver, ended.find_element(By.LINK_TEXT, "sign in"))
    assert "agent-memory keys create" in driver.find_element(By.ID, "get-a-key").text
    driver.find_element(By.ID, "api_key").send_keys(key)
    follow(driver, driver.find_element(By.ID, "sign-in"))
    assert driver.find_element(By.ID, "role").text == "admin"
    assert driver.find_elements(By.LINK_TEXT, "Keys")
    return key


async def test_the_first_key_is_safe_to_make_in_a_real_browser(
    served: str, db: asyncpg.Connection, browser: Any
) -> None:
    key = await asyncio.to_thread(first_key_journey, browser, served)
    assert key.startswith("am_")
    assert await db.fetchval("SELECT role FROM api_keys") == "admin"


def drafts_journey(driver: Any, base: str, admin_key: str, ids: dict[str, str]) -> None:
    """The review queue as a person works through it: each draft whole with its evidence;
    one rewritten in place and kept; a group of near-duplicates settled in one click (the
    first kept, the rest dropped); two ticked and kept at once, one ticked and dropped, then
    put back."""
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    sign_in(driver, base, admin_key)
    follow(driver, driver.find_element(By.LINK_TEXT, "Drafts"))
    assert len(driver.find_elements(By.CSS_SELECTOR, "#drafts article")) == 6
    evidence = driver.find_element(By.ID, f"evidence-{ids['fix']}").text
    assert "ImportError: cannot import name 'helper'" in evidence and "passes now" in evidence
    assert "codex session c-1" in driver.find_element(By.ID, f"session-{ids['fix']}").text
    group = driver.find_element(By.CSS_SELECTOR, "#drafts section.group")
    grouped = [a.get_attribute("id").removeprefix("draft-")
               for a in group.find_elements(By.TAG_NAME, "article")]  # fmt: skip
    assert sorted(grouped) == sorted([ids["rule"], ids["rule again"]])
    shot(driver, "drafts")

    text = driver.find_element(By.ID, f"text-{ids['fix']}")
    assert text.get_attribute("value") == DRAFT_TEXTS["fix"]  # the whole text, in place
    text.clear()
    text.send_keys(REWRITE)
    follow(driver, driver.find_element(By.ID, f"keep-{ids['fix']}"))
    follow(driver, driver.find_element(By.ID, f"keep-first-{grouped[0]}"))
    assert len(driver.find_elements(By.CSS_SELECTOR, "#drafts article")) == 3
    assert not driver.find_elements(By.CSS_SELECTOR, "#drafts section.group")

    driver.find_element(By.ID, f"pick-{ids['ruff']}").click()
    driver.find_element(By.ID, f"pick-{ids['convention']}").click()
    follow(driver, driver.find_element(By.ID, "keep-picked"))
    assert len(driver.find_elements(By.CSS_SELECTOR, "#drafts article")) == 1
    driver.find_element(By.ID, f"pick-{ids['push']}").click()
    follow(driver, driver.find_element(By.ID, "drop-picked"))
    assert "No drafts wait for review" in driver.find_element(By.ID, "drafts").text
    follow(driver, driver.find_element(By.ID, f"restore-{ids['push']}"))
    assert driver.find_elements(By.ID, f"draft-{ids['push']}")


DRAFT_TEXTS = {
    "rule": "Never edit the generated files; always use the make target instead.",
    "rule again": "Don't edit generated files by hand, use the make target.",
    "fix": "`make test` failed with: ImportError: helper.\nIt passed after changing helper.py.",
    "ruff": "Always run ruff before committing.",
    "convention": "Tests run through `uv run pytest -q`, never a bare pytest.",
    "push": "Always open a pull request; never push to main.",
}
REWRITE = "`make test` needs helper.py: add it before the tests import it."


async def test_the_review_queue_in_a_real_browser(
    served: str, db: asyncpg.Connection, browser: Any
) -> None:
    keys = KeyService.on_connection(db)
    admin = (await keys.create("team", "owner", "admin")).key
    base = {"source_repo": "acme/api", "client": "codex", "client_session": "c-1"}
    kinds = {"fix": "fix", "convention": "convention"}
    evidence = {"fix": {"error": "ImportError: cannot import name 'helper'",
                        "change": "helper.py (added)", "command": "make test"}}  # fmt: skip
    drafts = [
        {**base, "kind": kinds.get(name, "instruction"), "text": text,
         "evidence": evidence.get(name, {})}
        for name, text in DRAFT_TEXTS.items()
    ]  # fmt: skip
    async with httpx.AsyncClient(base_url=served) as api:
        queued = await api.post(
            "/drafts", json={"drafts": drafts}, headers={"Authorization": f"Bearer {admin}"}
        )
    ids = dict(zip(DRAFT_TEXTS, queued.json()["queued"], strict=True))
    await asyncio.to_thread(drafts_journey, browser, served, admin, ids)
    statuses = {r["id"]: r["status"] for r in await db.fetch("SELECT id::text, status FROM drafts")}
    kept_rule = next(n for n in ("rule", "rule again") if statuses[ids[n]] == "kept")
    assert {n: statuses[i] for n, i in ids.items()} == {
        "rule": "kept" if kept_rule == "rule" else "dropped",
        "rule again": "kept" if kept_rule == "rule again" else "dropped",
        "fix": "kept", "ruff": "kept", "convention": "kept", "push": "pending",
    }  # fmt: skip
    memories = await db.fetch("SELECT content, trust_level FROM memories")
    assert sorted((m["content"], m["trust_level"]) for m in memories) == sorted(
        (text, "user")
        for text in (
            REWRITE,
            DRAFT_TEXTS[kept_rule],
            DRAFT_TEXTS["ruff"],
            DRAFT_TEXTS["convention"],
        )
    )
    trail = (
        "SELECT action, detail->>'edited' AS edited FROM audit_log"
        " WHERE action LIKE 'draft%' ORDER BY at"
    )
    actions = [(r["action"], r["edited"]) for r in await db.fetch(trail)]
    assert actions == [
        ("draft_import", None), ("draft_keep", "true"), ("draft_keep", "false"),
        ("draft_drop", None), ("draft_keep", "false"), ("draft_keep", "false"),
        ("draft_drop", None), ("draft_restore", None),
    ]  # fmt: skip


def tidy_journey(driver: Any, base: str, admin_key: str) -> None:
    """Tidy: no kind is shown until asked for (none is measured right nine times in ten),
    but the page says how many wait; every kind; a merge accepted, then undone; a
    replacement dismissed, then undone."""
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    sign_in(driver, base, admin_key)
    follow(driver, driver.find_element(By.LINK_TEXT, "Tidy"))
    merge = MEASURED_PRECISION["merge"]
    assert f"merge {merge:.2f}" in driver.find_element(By.ID, "precision").text
    follow(driver, driver.find_element(By.ID, "refresh"))
    assert not driver.find_elements(By.CSS_SELECTOR, "#proposals article")
    assert "1 merge, 1 replace" in driver.find_element(By.ID, "not-listed").text
    follow(driver, driver.find_element(By.ID, "every-kind"))
    kinds = {
        a.find_element(By.CLASS_NAME, "kind").text: a.get_attribute("id").removeprefix("proposal-")
        for a in driver.find_elements(By.CSS_SELECTOR, "#proposals article")
    }
    assert set(kinds) == {"merge", "replace"}
    follow(driver, driver.find_element(By.ID, f"accept-{kinds['merge']}"))
    follow(driver, driver.find_element(By.ID, "every-kind"))
    follow(driver, driver.find_element(By.ID, f"dismiss-{kinds['replace']}"))
    assert not driver.find_elements(By.CSS_SELECTOR, "#proposals article")
    follow(driver, driver.find_element(By.ID, f"undo-{kinds['merge']}"))
    follow(driver, driver.find_element(By.ID, f"undo-{kinds['replace']}"))
    follow(driver, driver.find_element(By.ID, "every-kind"))
    assert len(driver.find_elements(By.CSS_SELECTOR, "#proposals article")) == 2


async def test_tidy_proposals_in_a_real_browser(
    served: str, db: asyncpg.Connection, browser: Any
) -> None:
    from tests.helpers.export_files import NDJSON_BODY, export_file
    from tests.helpers.tidy import OPPOSED, SAME

    keys = KeyService.on_connection(db)
    admin = (await keys.create("default", "owner", "admin")).key
    lines = [{"content": c, "memory_type": "learning", "source_repo": "acme/api"}
             for c in SAME + OPPOSED]  # fmt: skip
    async with httpx.AsyncClient(base_url=served) as api:
        done = await api.post(
            "/memories/import",
            content=export_file(*lines),
            headers={"Authorization": f"Bearer {admin}", **NDJSON_BODY},
        )
        assert done.status_code == 200, done.text
    await asyncio.to_thread(tidy_journey, browser, served, admin)
    trail = "SELECT action FROM audit_log WHERE action NOT IN ('import', 'key_create') ORDER BY at"
    actions = [r["action"] for r in await db.fetch(trail)]
    assert actions == ["supersede", "proposal_dismiss", "undo", "proposal_restore"]
    live = "SELECT count(*) FROM memories WHERE superseded_by IS NULL AND archived_at IS NULL"
    assert await db.fetchval(live) == 4  # the merge undone
    statuses = await db.fetch("SELECT status FROM proposals")
    assert [r["status"] for r in statuses] == ["pending", "pending"]
