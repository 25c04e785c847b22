"""Recall: what the hooks hand an agent unasked. Gated (nothing for an unrelated prompt),
within its budget (never over, not even for the first hit), never what the session was
already handed, by occasion (a failure recalls what was learned from failures), and only
what is handed over counts as read."""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest

from app.domain.text import estimate_tokens

pytestmark = pytest.mark.citus

FIX = (
    "ModuleNotFoundError: No module named 'yaml' in CI means the image lacks the dev extras:"
    " install them with pip install -e '.[dev]'"
)
RULE = "Upload tests use their own tmp_path: a shared temp dir fails them with PermissionError"


async def stored(api: httpx.AsyncClient, content: str, kind: str, repo: str = "acme/api") -> str:
    body = {"content": content, "memory_type": kind, "source_repo": repo}
    answer = await api.post("/memories", json=body)
    assert answer.status_code == 201, answer.text
    return str(answer.json()["memory"]["id"])


async def recall(api: httpx.AsyncClient, q: str, **fields: Any) -> dict[str, Any]:
    answer = await api.post("/recall", json={"q": q, "source_repo": "acme/api", **fields})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def test_a_prompt_gets_what_bears_on_it_and_an_unrelated_one_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    rule = await stored(api, RULE, "code_pattern")
    found = await recall(api, "why does the upload test fail with PermissionError?")
    assert found["ids"] == [rule]
    assert found["text"].startswith("Memories that may bear on this")
    assert f'\n"{RULE}"' in found["text"]  # a quoted literal, as every stored text
    assert await recall(api, "write a haiku about autumn leaves") == {"text": "", "ids": []}
    # Only what was handed over counts as read.
    assert await db.fetchval("SELECT access_count FROM memory_access") == 1


async def test_what_the_session_was_handed_is_not_handed_again(api: httpx.AsyncClient) -> None:
    rule = await stored(api, RULE, "code_pattern")
    again = await recall(api, "upload test PermissionError tmp_path", exclude=[rule])
    assert again == {"text": "", "ids": []}


async def test_a_failure_recalls_what_was_learned_from_failures(api: httpx.AsyncClient) -> None:
    fix = await stored(api, FIX, "error_pattern")
    await stored(api, "Install the dev extras before running the linters", "decision")
    error = "E   ModuleNotFoundError: No module named 'yaml'"
    assert (await recall(api, error, purpose="failure"))["ids"] == [fix]
    elsewhere = await recall(api, error, purpose="failure", source_repo="acme/web")
    assert elsewhere["ids"] == []  # another repository's fix is not this one's


async def test_the_budget_holds_even_for_the_first_hit(api: httpx.AsyncClient) -> None:
    long_rule = RULE + ". " + "Each test gets a fresh directory from pytest. " * 20
    await stored(api, long_rule, "code_pattern")
    await stored(api, RULE, "code_pattern", repo="acme/api")
    within = await recall(api, "upload test fails with PermissionError", max_tokens=80)
    assert within["ids"] and estimate_tokens(within["text"]) <= 80  # the head line included
    assert long_rule not in within["text"]
    refused = await api.post("/recall", json={"q": "x", "max_tokens": 10})
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "max_tokens"


async def test_a_file_recalls_the_memories_that_name_it_stale_ones_marked(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    def about(content: str, files: list[str], repo: str | None) -> dict[str, Any]:
        return {"content": content, "memory_type": "decision", "source_repo": repo,
                "files": files}  # fmt: skip

    written = {}
    for content, files, repo in (
        ("pool.py keeps hnsw.ef_search at 100 per connection", ["app/db/pool.py"], "acme/api"),
        ("pool.py: never share a connection across tasks", ["app/db/pool.py", "x.py"], None),
        ("pool.py in the other repository is not this one", ["app/db/pool.py"], "acme/web"),
        ("the retry loop lives in app/db/retry.py", ["app/db/retry.py"], "acme/api"),
    ):
        answer = await api.post("/memories", json=about(content, files, repo))
        assert answer.status_code == 201, answer.text
        written[content] = answer.json()["memory"]["id"]
    await db.execute(
        "UPDATE memories SET stale_since = now(), stale_reason = '[]' WHERE content LIKE '%100%'"
    )
    found = await recall(api, "app/db/pool.py", purpose="file")
    # The repository's own first, then the global one; neither another repository's nor
    # another file's; no gate (a file names them), and the reads counted.
    mine = "pool.py keeps hnsw.ef_search at 100 per connection"
    shared = "pool.py: never share a connection across tasks"
    assert found["ids"] == [written[mine], written[shared]]
    lines = found["text"].splitlines()
    assert lines[0].startswith("Memories about this file")
    assert "possibly-stale" in lines[1] and "global" in lines[3]
    assert not any(line.startswith("1. [0.") for line in lines)  # no score: not ranked by q
    handed = await recall(api, "app/db/pool.py", purpose="file", exclude=found["ids"])
    assert handed == {"text": "", "ids": []}
    assert await recall(api, "no/such/file.py", purpose="file") == {"text": "", "ids": []}
