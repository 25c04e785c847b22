"""Strategies, hints, feedback, /remember and /retry-context over HTTP."""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.embeddings.base import EmbeddingError
from app.services.search import SearchService

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

PLAN = "1. Write the SQL migration file\n2. Apply it with alembic upgrade\n3. Add a downgrade"


def attempt(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "task_description": "Create a database migration for the users table",
        "plan_summary": PLAN,
        "attempt_history": [
            {"step_index": 0, "action": "write", "result": "success"},
            {"step_index": 1, "action": "apply", "result": "success"},
            {"step_index": 2, "action": "downgrade", "result": "success"},
        ],
        "total_attempts": 1,
        "quality_score": 8,
        "files_changed": ["migrations/versions/0002.py"],
        "model": "model-x",
        "source_repo": "acme/api",
        "task_id": "T-9",
    }
    body.update(overrides)
    return body


async def test_first_attempt_success_is_stored_as_a_strategy(api: httpx.AsyncClient) -> None:
    response = await api.post("/strategies/learn", json=attempt())
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "stored"
    memory = body["memory"]
    assert memory["memory_type"] == memory["category"] == "strategy"
    assert memory["trust_level"] == "agent"
    assert memory["tags"] == ["database migration", "strategy"]
    assert memory["content"] == (
        'Strategy for "database migration": Write the SQL migration file → '
        "Apply it with alembic upgrade → Add a downgrade"
    )
    assert memory["metadata"]["task_pattern"] == "database migration"
    assert memory["metadata"]["steps"] == PLAN.splitlines()
    assert memory["metadata"]["files_changed"] == ["migrations/versions/0002.py"]
    assert memory["metadata"]["quality_score"] == 8
    assert memory["metadata"]["reuse_count"] == 0
    assert memory["context"] == "Create a database migration for the users table"

    again = await api.post("/strategies/learn", json=attempt())
    assert again.json()["status"] == "reinforced"
    assert again.json()["memory"]["observation_count"] == 2


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"total_attempts": 2}, "first-attempt"),
        ({"quality_score": 6.5}, "quality_score"),
        (
            {"attempt_history": [{"step_index": i, "result": "failure"} for i in range(3)]},
            "no successful step",
        ),
    ],
)
async def test_anything_but_a_good_first_attempt_is_skipped(
    api: httpx.AsyncClient, db: asyncpg.Connection, overrides: dict[str, Any], reason: str
) -> None:
    response = await api.post("/strategies/learn", json=attempt(**overrides))
    assert response.status_code == 200
    assert response.json()["status"] == "skipped"
    assert reason in response.json()["reason"]
    assert await db.fetchval("SELECT count(*) FROM memories") == 0


async def test_plan_steps_work_as_well_as_a_plan_summary(api: httpx.AsyncClient) -> None:
    body = attempt(plan_summary=None, plan_steps=PLAN.splitlines())
    response = await api.post("/strategies/learn", json=body)
    assert response.json()["memory"]["metadata"]["steps"] == PLAN.splitlines()


async def test_hint_comes_from_the_same_repo_above_the_threshold(api: httpx.AsyncClient) -> None:
    await api.post("/strategies/learn", json=attempt())
    hint = (
        await api.get(
            "/strategies/hint",
            params={
                "task": "Write a migration that adds a column to users",
                "source_repo": "acme/api",
            },
        )
    ).json()
    assert hint["hint"].startswith("[STRATEGY HINT — previously successful approach")
    assert hint["hint"].endswith("[END STRATEGY HINT — use as inspiration, not as instruction]")
    assert "Write the SQL migration file" in hint["hint"]
    assert hint["similarity"] > 0.3
    assert hint["strategy"]["memory_type"] == "strategy"

    other_repo = (
        await api.get(
            "/strategies/hint",
            params={
                "task": "Write a migration that adds a column to users",
                "source_repo": "acme/web",
            },
        )
    ).json()
    assert other_repo == {"hint": "", "similarity": 0.0, "strategy": None}

    unrelated = (
        await api.get(
            "/strategies/hint",
            params={"task": "Pick colours for the marketing banner", "source_repo": "acme/api"},
        )
    ).json()
    assert unrelated["hint"] == ""


async def test_hint_finds_a_strategy_through_the_task_it_was_learned_in(
    api: httpx.AsyncClient,
) -> None:
    """No word of "set up the users table" is in the strategy's steps, only in its task."""
    await api.post("/strategies/learn", json=attempt())
    hint = (
        await api.get(
            "/strategies/hint", params={"task": "set up the users table", "source_repo": "acme/api"}
        )
    ).json()
    assert "Write the SQL migration file" in hint["hint"]
    assert hint["similarity"] > 0.3


async def test_hint_failure_degrades_to_an_empty_hint(
    api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    await api.post("/strategies/learn", json=attempt())

    async def broken(self: Any, request: Any) -> Any:
        raise RuntimeError("search exploded")

    monkeypatch.setattr(SearchService, "run", broken)
    response = await api.get(
        "/strategies/hint", params={"task": "database migration", "source_repo": "acme/api"}
    )
    assert response.status_code == 200
    assert response.json() == {"hint": "", "similarity": 0.0, "strategy": None}


async def test_hint_still_works_keyword_only_when_the_embedder_is_down(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    await api.post("/strategies/learn", json=attempt())

    async def down(text: str, **_: object) -> list[float]:
        raise EmbeddingError("provider down")

    monkeypatch.setattr(app.state.runtime.embedder, "embed_one", down)
    response = await api.get(
        "/strategies/hint",
        params={"task": "Write the SQL migration file for orders", "source_repo": "acme/api"},
    )
    assert response.status_code == 200
    assert "Write the SQL migration file" in response.json()["hint"]


async def test_unhelpful_feedback_sinks_a_strategy_below_the_hint_threshold(
    api: httpx.AsyncClient,
) -> None:
    stored = (await api.post("/strategies/learn", json=attempt())).json()["memory"]
    params = {"task": "Create a database migration for the orders table", "source_repo": "acme/api"}
    assert (await api.get("/strategies/hint", params=params)).json()["hint"]

    helpful = await api.post(f"/memories/{stored['id']}/feedback", json={"outcome": "helpful"})
    assert helpful.json()["relevance_score"] == pytest.approx(1.1)
    assert helpful.json()["metadata"]["reuse_count"] == 1
    for _ in range(4):
        sunk = await api.post(f"/memories/{stored['id']}/feedback", json={"outcome": "unhelpful"})
    assert sunk.json()["relevance_score"] == pytest.approx(0.1)
    assert sunk.json()["metadata"]["reuse_count"] == 5
    assert (await api.get("/strategies/hint", params=params)).json()["hint"] == ""

    floor = await api.post(f"/memories/{stored['id']}/feedback", json={"outcome": "unhelpful"})
    assert floor.json()["relevance_score"] == 0.0


async def test_feedback_on_an_unknown_memory_is_404(api: httpx.AsyncClient) -> None:
    missing = "01a20000-0000-7000-8000-000000000000"
    response = await api.post(f"/memories/{missing}/feedback", json={"outcome": "helpful"})
    assert response.status_code == 404
    bad = await api.post(f"/memories/{missing}/feedback", json={"outcome": "meh"})
    assert bad.status_code == 422


async def test_remember_stores_with_inferred_category_title_and_low_confidence(
    api: httpx.AsyncClient,
) -> None:
    text = (
        "Never run the integration suite against the shared staging database, it corrupts fixtures"
    )
    response = await api.post("/remember", json={"text": text, "source_repo": "acme/api"})
    assert response.status_code == 201
    body = response.json()
    title = text[:57] + "..."
    assert body["status"] == "stored"
    assert body["message"] == f"Stored: {title} (anti-patterns)"
    memory = body["memory"]
    assert memory["category"] == "anti-patterns"
    assert memory["memory_type"] == "anti_pattern"
    assert memory["name"] == title
    assert memory["confidence"] == "low"
    assert memory["source"] == "session-capture"


async def test_remember_again_reinforces_and_keeps_confidence(api: httpx.AsyncClient) -> None:
    text = "Prefer keyset pagination for the audit log endpoint"
    await api.post("/remember", json={"text": text, "confidence": "high", "source_repo": None})
    again = await api.post(
        "/remember", json={"text": text, "confidence": "low", "source_repo": None}
    )
    assert again.status_code == 200
    body = again.json()
    assert body == body | {
        "status": "reinforced",
        "message": f"Reinforced: {text} (patterns) — observation count incremented",
    }
    assert body["memory"]["confidence"] == "high" and body["memory"]["observation_count"] == 2


async def test_remember_rejects_short_text_and_bad_confidence_storing_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    short = await api.post("/remember", json={"text": "   too short       ", "source_repo": None})
    assert short.status_code == 422
    assert short.json()["detail"] == (
        'a learning is a rule someone can follow, in 3 words or more ("Use pnpm, not npm")'
    )
    bad = await api.post(
        "/remember",
        json={
            "text": "A long enough learning about caching",
            "confidence": "sure",
            "source_repo": None,
        },
    )
    assert bad.status_code == 422
    assert bad.json()["detail"] == "invalid confidence 'sure'. Must be one of: high, medium, low"
    assert await db.fetchval("SELECT count(*) FROM memories") == 0
    # A short rule is a rule: three words are enough, whatever their length.
    for rule in ("Use pnpm, not npm", "Run make itest"):
        stored = await api.post("/remember", json={"text": rule, "source_repo": "acme/web"})
        assert stored.status_code == 201, stored.text


async def test_remember_keeps_an_explicit_category_name_and_reasoning(
    api: httpx.AsyncClient,
) -> None:
    response = await api.post(
        "/remember",
        json={
            "text": "The staging cluster scales down at night, so nightly jobs are slow",
            "source_repo": None,
            "category": "heuristics",
            "name": "staging scales down",
            "reasoning": "seen three times",
            "references": ["ops#12"],
            "context": "Why did the nightly export take four hours?",
        },
    )
    memory = response.json()["memory"]
    assert (memory["category"], memory["name"]) == ("heuristics", "staging scales down")
    assert memory["metadata"] == {"reasoning": "seen three times", "references": ["ops#12"]}
    assert memory["context"] == "Why did the nightly export take four hours?"
    bad = await api.post(
        "/remember",
        json={
            "text": "A long enough learning about caching",
            "context": "\x07",
            "source_repo": None,
        },
    )
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "context"


async def test_retry_context_endpoint(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/retry-context",
        json={
            "task_description": "Fix the failing import",
            "plan_summary": "1. add import",
            "current_files": [{"path": "a.py", "content": "import os\nx = 1\ny = 2\n"}],
            "previous_files": [{"path": "a.py", "content": "x = 1\ny = 2\n"}],
            "validation_output": "NameError: name 'os' is not defined",
            "diagnosis": {"root_cause": "missing import"},
            "attempt_number": 2,
        },
    )
    assert response.status_code == 200
    body = response.json()
    assert body["changed_files"] == [{"path": "a.py", "diff": "+ import os"}]
    assert body["latest_error"] == "NameError: name 'os' is not defined"
    assert body["estimated_tokens"] > 0
