"""Every shape of a memory agrees with the field table (app/domain/fields.py): a field added
to the table and forgotten in a shape, or a shape with a field the table lacks, fails here."""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any

import httpx
from mcp import Client

from app.api.schemas.lifecycle import MemoryPatch
from app.api.schemas.memories import MemoryIn
from app.domain.fields import CLIENT_FIELDS, EDITABLE_FIELDS, EXPORTED_FIELDS, MEMORY_FIELDS
from app.domain.inputs.memories import MemoryRequest
from app.domain.memory import Memory, NewMemory
from app.domain.transfer import MemoryRecord
from app.repository.rows import MEMORY_COLUMNS, client_values
from app.shapes import MemoryOut

ALL = [f.name for f in MEMORY_FIELDS]


def names(shape: Any) -> set[str]:
    if dataclasses.is_dataclass(shape):
        return {f.name for f in dataclasses.fields(shape)}
    return set(shape.model_fields)


def test_the_domain_types_are_the_table() -> None:
    assert names(Memory) == set(ALL)
    assert names(NewMemory) == set(CLIENT_FIELDS)
    assert names(MemoryRequest) == set(CLIENT_FIELDS)
    # The row mapping and the bind values come from the table itself.
    assert [
        line.split(" AS ")[-1].removeprefix("m.") for line in MEMORY_COLUMNS.split(",\n    ")
    ] == ALL
    assert set(client_values(NewMemory("x"))) == set(CLIENT_FIELDS)


def test_the_doors_take_what_a_client_may_set() -> None:
    assert names(MemoryIn) == set(CLIENT_FIELDS)
    assert names(MemoryPatch) == set(EDITABLE_FIELDS)
    # Output: every field a client may see (the tenant's id too), but the computed ones.
    assert names(MemoryOut) - {"embedding_state"} == set(ALL) - {"has_embedding", "intact"}
    # An export line: what the table exports, its links, and its vector.
    assert names(MemoryRecord) - {"embedding"} == set(EXPORTED_FIELDS)


async def test_the_mcp_store_tool_takes_what_a_client_may_set(mcp_served: str) -> None:
    async with Client(f"{mcp_served}/mcp") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools["store_memory"].input_schema["properties"]) == set(CLIENT_FIELDS)


async def test_openapi_shows_the_store_body_as_the_table(api: httpx.AsyncClient) -> None:
    spec = (await api.get("/openapi.json")).json()
    body = spec["components"]["schemas"]["MemoryIn"]["properties"]
    assert set(body) == set(CLIENT_FIELDS)
    assert inspect.isclass(MemoryIn)


async def test_openapi_shows_the_configured_limits(
    settings: Any, embedder: Any, database_url: str
) -> None:
    from app.main import create_app

    specs = [
        create_app(
            settings.model_copy(update=limits), embedder=embedder, database_url=database_url
        ).openapi()
        for limits in (
            {"max_content_chars": 1234, "max_tags": 7, "max_tag_chars": 33},
            {"max_tag_chars": 44},  # a second server's document is its own (nothing shared)
        )
    ]
    body = specs[0]["components"]["schemas"]["MemoryIn"]["properties"]
    assert body["content"]["maxLength"] == 1234 and body["tags"]["maxItems"] == 7
    assert body["tags"]["items"]["maxLength"] == 33
    assert (
        specs[1]["components"]["schemas"]["MemoryIn"]["properties"]["tags"]["items"]["maxLength"]
        == 44
    )
    assert "x-limit" not in json.dumps(specs)
