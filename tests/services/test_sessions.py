"""Sessions and the recency-graded snapshot."""

from __future__ import annotations

import json
import uuid
from typing import Any

import asyncpg
import httpx
import pytest

from app.services.lifecycle import LifecycleService

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus


async def start(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await api.post("/sessions", json=body)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


async def finish(api: httpx.AsyncClient, session_id: str, **body: Any) -> httpx.Response:
    return await api.post(f"/sessions/{session_id}/end", json=body)


async def test_session_start_prunes_and_hands_over_capture_settings(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    stale = (await api.post("/memories", json={"content": "stale", "source_repo": "r"})).json()
    await db.execute(
        "UPDATE memories SET created_at = now() - interval '200 days' WHERE id = $1",
        uuid.UUID(stale["memory"]["id"]),
    )
    body = await start(api, source_repo="r", agent="claude", task="add pagination")
    assert body["session"]["status"] == "active"
    assert body["session_id"] == body["session"]["id"]
    assert body["pruning"]["total_archived"] == 1
    assert body["capture"]["capture_mode"] == "ask-first"
    assert body["capture"]["silent_capture_budget"] == 5
    assert "/remember" in body["capture"]["tip"]


async def test_session_starts_even_when_pruning_fails(
    api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(LifecycleService, "prune", broken)
    body = await start(api, source_repo="r")
    assert body["pruning"] is None
    assert body["session"]["status"] == "active"


async def test_session_end_rules(api: httpx.AsyncClient) -> None:
    session = await start(api, source_repo="r")
    ended = await finish(
        api,
        session["session_id"],
        status="completed",
        summary="did it",
        key_changes=[{"file": "a.py", "action": "edit", "description": "fixed"}],
    )
    assert ended.status_code == 200
    assert ended.json()["status"] == "completed" and ended.json()["ended_at"]
    again = await finish(api, session["session_id"], status="failed")
    assert again.status_code == 409
    assert (await finish(api, str(uuid.uuid4()), status="completed")).status_code == 404
    assert (await finish(api, session["session_id"], status="done")).status_code == 422


async def seed_sessions(api: httpx.AsyncClient, db: asyncpg.Connection, count: int) -> None:
    for i in range(count):
        session = await start(api, source_repo="r", agent="agent", task=f"task {i}")
        await finish(
            api,
            session["session_id"],
            status="completed",
            summary=f"session {i} summary " + "x" * 100,
            key_changes=[
                {"file": f"f{i}_{k}.py", "action": "edit", "description": f"change {k}"}
                for k in range(5)
            ],
        )
        # Session i ended i hours after the first: the last one is the most recent.
        await db.execute(
            "UPDATE sessions SET ended_at = now() - make_interval(hours => $2) WHERE id = $1",
            uuid.UUID(session["session_id"]),
            100 - i,
        )


async def memory(
    api: httpx.AsyncClient, db: asyncpg.Connection, content: str, days: int, **fields: Any
) -> None:
    stored = (
        await api.post("/memories", json={"content": content, "source_repo": "r", **fields})
    ).json()
    await db.execute(
        "UPDATE memories SET created_at = now() - make_interval(days => $2) WHERE id = $1",
        uuid.UUID(stored["memory"]["id"]),
        days,
    )


async def test_snapshot_grades_by_recency(api: httpx.AsyncClient, db: asyncpg.Connection) -> None:
    await seed_sessions(api, db, 12)
    for i in range(7):
        await memory(
            api,
            db,
            f"decision {i}",
            i,
            memory_type="decision",
            metadata={"reasoning": "because " + "r" * 150},
        )
    await memory(api, db, "old decision", 30, memory_type="decision")
    for i in range(6):
        await memory(api, db, f"learning {i}", i, memory_type="learning")
    await memory(api, db, "error pattern recent", 1, memory_type="error_pattern")
    await memory(api, db, "error pattern old", 20, memory_type="error_pattern")
    await memory(
        api,
        db,
        "Never force-push to main",
        50,
        memory_type="anti_pattern",
        pinned=True,
        trust_level="user",
        metadata={"do": "open a pull request"},
    )
    await memory(
        api,
        db,
        "Run the linter before committing",
        50,
        memory_type="pattern",
        pinned=True,
        trust_level="system",
    )
    # An agent's own pin keeps its memory from fading; it is no guardrail.
    await memory(api, db, "Agents pinned this themselves", 1, memory_type="learning", pinned=True)
    await memory(api, db, "archived decision", 1, memory_type="decision")
    await db.execute("UPDATE memories SET archived_at = now() WHERE content = 'archived decision'")

    text = (await api.get("/snapshot", params={"source_repo": "r"})).text
    lines = text.splitlines()
    assert lines[0] == '# Memory snapshot: "r"'
    # Guardrails always (pinned, user or system trust), with NEVER/DO when the memory has
    # both and who stands behind each.
    assert '- NEVER [user]: "Never force-push to main" -- DO: "open a pull request"' in lines
    assert '- MUST [system]: "Run the linter before committing"' in lines
    assert not any("MUST" in line and "Agents pinned" in line for line in lines)
    # 3 most recent sessions in full, newest first, 3 key changes each.
    recent = [line for line in lines if line.startswith("- ") and '"agent" · "task' in line]
    assert [line.split('"task ')[1].split('"')[0] for line in recent] == ["11", "10", "9"]
    assert sum(1 for line in lines if line.startswith('  - "f11_')) == 3
    assert '  - "f11_3.py" ("edit"): "change 3"' not in lines
    # Sessions 4..10 as summaries cut to 80 characters.
    earlier = lines[lines.index("## Earlier sessions") + 1 : lines.index("## Earlier sessions") + 8]
    assert len(earlier) == 7 and all(line.endswith('..."') for line in earlier)
    assert all(len(json.loads(line.split(": ", 1)[1])) == 80 for line in earlier)
    assert not any("session 1 summary" in line or "session 0 summary" in line for line in lines)
    # Decisions: the 5 newest of the last 7 days, reasoning cut to 100, then the rest counted.
    decisions = [line for line in lines if line.startswith('- [agent] "decision ')]
    assert [line.split(" (why")[0] for line in decisions] == [
        f'- [agent] "decision {i}"' for i in range(5)
    ]
    assert all(len(json.loads(line.split("(why: ")[1][:-1])) == 100 for line in decisions)
    assert "(+ 3 older decisions)" in lines
    learned = [line for line in lines if line.startswith("- [agent] learning: ")]
    assert '- [agent] learning: "Agents pinned this themselves"' in learned
    assert sum(1 for line in learned if ': "learning' in line) == 4
    assert "(+ 2 older learnings)" in lines
    assert '- [agent] "error pattern recent"' in lines and "(+ 1 older error patterns)" in lines
    assert "archived decision" not in text

    trimmed = (await api.get("/snapshot", params={"source_repo": "r", "max_chars": 900})).text
    assert len(trimmed) <= 900
    *kept, said = trimmed.rstrip("\n").splitlines()
    assert set(kept) <= set(lines)  # whole lines only
    dropped = len([x for x in lines if x.startswith(("-", "  -", "("))]) - len(
        [x for x in kept if x.startswith(("-", "  -", "("))]
    )
    assert said == f"({dropped} older lines left out to fit the size asked for)"
    # A token budget is the same bound at 4 characters a token; the tighter bound wins.
    by_tokens = await api.get(
        "/snapshot", params={"source_repo": "r", "max_tokens": 225, "max_chars": 5000}
    )
    assert by_tokens.text == trimmed
    budgeted = await api.get(
        "/snapshot", params={"source_repo": "r", "max_tokens": 225, "format": "json"}
    )
    assert budgeted.json()["left_out"] == dropped
    assert '- NEVER [user]: "Never force-push to main" -- DO: "open a pull request"' in trimmed
    assert "## Earlier sessions" not in trimmed  # least recent goes first
    assert '"agent" · "task 11"' in trimmed  # most recent stays

    as_json = (await api.get("/snapshot", params={"source_repo": "r", "format": "json"})).json()
    assert len(as_json["recent_sessions"]) == 3
    assert len(as_json["earlier_sessions"]) == 7
    assert len(as_json["decisions"]) == 5 and as_json["older_decisions"] == 3
    assert len(as_json["guardrails"]) == 2
