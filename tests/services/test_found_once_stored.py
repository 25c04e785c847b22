"""A memory the service has answered for is found by both halves of search at once: no
store is acknowledged before its row and its index entries (the HNSW graph's, the keyword
index's) exist (issue 69)."""

from __future__ import annotations

import asyncpg
import httpx
import pytest

from app.config import Settings
from app.embeddings.base import Embedder
from app.main import create_app
from tests.conftest import EMPTY_TABLES, running

# The service's data: this module runs again on a Citus cluster (scripts/test).
pytestmark = pytest.mark.citus

LESSONS = [
    "Rotate the staging TLS certificate before it lapses on Fridays",
    "The flaky checkout test needs the payment sandbox seeded first",
    "Use the read replica for the nightly analytics export",
]


async def test_a_stored_memory_is_found_by_vector_search_as_soon_as_it_is_answered(
    settings: Settings, embedder: Embedder, database_url: str, db: asyncpg.Connection
) -> None:
    # The vector side always walks the HNSW graph (no exact read of a small scope), so
    # that a memory missing from the graph would be missing from the answer.
    graph_only = Settings(**{**settings.model_dump(), "vector_exact_factor": 0.0})
    application = create_app(graph_only, embedder=embedder, database_url=database_url)
    try:
        async with running(application):
            transport = httpx.ASGITransport(app=application)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:

                async def found(text: str, alpha: float) -> list[str]:
                    params: dict[str, str | float | bool] = {
                        "q": text,
                        "source_repo": "acme/api",
                        "alpha": alpha,
                        "floor": False,
                    }
                    answer = (await client.get("/search", params=params)).json()
                    return [hit["memory"]["content"] for hit in answer["results"]]

                one = {"content": LESSONS[0], "source_repo": "acme/api"}
                assert (await client.post("/memories", json=one)).status_code == 201
                assert LESSONS[0] in await found(LESSONS[0], alpha=1.0)  # its vector
                assert LESSONS[0] in await found(LESSONS[0], alpha=0.0)  # its words

                batch = [{"content": text, "source_repo": "acme/api"} for text in LESSONS[1:]]
                answered = await client.post("/memories/batch", json={"memories": batch})
                assert [r["status"] for r in answered.json()["results"]] == ["stored"] * 2
                for text in LESSONS[1:]:
                    assert text in await found(text, alpha=1.0)
                    assert text in await found(text, alpha=0.0)
    finally:
        await db.execute(EMPTY_TABLES)
