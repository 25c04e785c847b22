"""A refusal says what to send (issue 53): a required field with an example of its value,
a JSON syntax error with its line and column, a body that is not a JSON object with the
content type to send, and a missing key with where the CLI and the hooks read one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import pytest

from app.services.keys import KeyService

pytestmark = pytest.mark.citus


def refusal(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 422, answer.text
    [error] = answer.json()["errors"]
    return dict(error)


async def test_a_memory_without_its_repository_says_what_to_send(api: httpx.AsyncClient) -> None:
    error = refusal(await api.post("/memories", json={"content": "Use pnpm, not npm, here"}))
    assert error["field"] == "source_repo"
    assert '"owner/name"' in error["message"] and "null" in error["message"]


async def test_a_json_syntax_error_is_placed_by_line_and_column(api: httpx.AsyncClient) -> None:
    sent = '{"content": "x",\n "source_repo": nul}'
    answer = await api.post("/memories", content=sent, headers={"Content-Type": "application/json"})
    error = refusal(answer)
    assert error["field"] == "body"  # not a character offset
    assert error["message"].startswith("the body is not valid JSON")
    assert error["message"].endswith("at line 2, column 17")


async def test_a_body_sent_as_text_names_the_content_type(api: httpx.AsyncClient) -> None:
    answer = await api.post("/memories", content=b'{"content": "x", "source_repo": null}')
    error = refusal(answer)
    assert error["field"] == "body" and "Content-Type: application/json" in error["message"]


@pytest.fixture
async def a_key(db: asyncpg.Connection) -> AsyncIterator[str]:
    yield (await KeyService.on_connection(db).create("default", "errors", "agent")).key
    await db.execute("TRUNCATE api_keys CASCADE")


async def test_a_request_without_a_key_says_where_one_goes(
    api: httpx.AsyncClient, a_key: str
) -> None:
    answer = await api.get("/memories")
    assert answer.status_code == 401
    detail = answer.json()["detail"]
    assert "Authorization: Bearer" in detail and "AGENT_MEMORY_API_KEY" in detail
    assert "agent-memory keys create" in detail
    assert (await api.get("/memories", headers={"Authorization": f"Bearer {a_key}"})).is_success


async def test_a_filter_on_a_type_no_memory_has_is_refused_naming_the_types(
    api: httpx.AsyncClient,
) -> None:
    """Types are open (any snake_case name), so a typo used to answer "no memories". Now a
    type that is neither known nor stored is refused at every door that filters, naming
    the known types and the tenant's own; a known type with no memory yet is no error."""
    stored = {"content": "Rotate the staging certificates every quarter", "source_repo": None}
    answer = await api.post("/memories", json=stored | {"memory_type": "runbook"})
    assert answer.status_code == 201, answer.text
    for asked in (
        api.get("/memories", params={"memory_type": "bogus"}),
        api.get("/search", params={"q": "certificates", "memory_type": "bogus"}),
    ):
        error = refusal(await asked)
        assert error["field"] == "memory_type"
        assert error["message"].startswith("memory_type 'bogus': no memory has this type;")
        assert "decision, error_pattern" in error["message"]
        assert error["message"].endswith(", runbook")
    own = await api.get("/memories", params={"memory_type": "runbook"})
    assert [m["memory_type"] for m in own.json()["memories"]] == ["runbook"]
    assert (await api.get("/memories", params={"memory_type": "decision"})).json()["memories"] == []


async def test_the_start_of_an_id_says_how_much_to_send(api: httpx.AsyncClient) -> None:
    """The prefix rule is the domain's, said in its words at the door (not a pattern)."""
    for sent in ("0193c", "not-hex-at-all", "0193c0de-" + "-" * 30):
        error = refusal(await api.get(f"/memories/by-prefix/{sent}"))
        assert error["field"] == "prefix", sent
        assert error["message"].startswith("an id or its first 6 or more hex digits"), sent
    assert (await api.get("/memories/by-prefix/0193c0de")).status_code == 404
