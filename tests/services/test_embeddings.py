"""The three providers: the real local model, the OpenAI-compatible client, feature hashing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.config import Settings
from app.embeddings.base import Embedder, EmbeddingError
from app.embeddings.concat import ConcatEmbedder
from app.embeddings.factory import build_embedder
from app.embeddings.hashing import HashEmbedder
from app.embeddings.local import LocalOnnxEmbedder, _similar_length_batches
from app.embeddings.model_files import dynamic_int8_copy, local_model_path, packaged_model_path
from app.embeddings.openai import OpenAIEmbedder


async def test_local_model_puts_paraphrases_close_and_keeps_order(embedder: Embedder) -> None:
    texts = [
        "The deploy failed because the database migration timed out",
        "Shipping broke: the schema change took too long",
        "My favourite pasta is carbonara",
    ]
    vectors = np.array(await embedder.embed(texts))
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    # Batching (and the length sort inside it) does not change a text's vector.
    single = np.array(await embedder.embed_one(texts[2]))
    assert np.allclose(single, vectors[2], atol=1e-4)


async def test_a_short_text_batched_with_long_ones_keeps_its_vector(embedder: Embedder) -> None:
    long_texts = [f"{'a long memory about retries and backoff ' * 8} number {i}" for i in range(3)]
    mixed = await embedder.embed(["rate limits", *long_texts])
    alone = await embedder.embed_one("rate limits")
    assert np.allclose(mixed[0], alone, atol=1e-4)


def test_batches_cut_where_padding_would_cost_more_than_a_model_call() -> None:
    lengths = [9, 40, 8, 9, 41, 10, 120]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    assert _similar_length_batches(order, lengths) == [[2, 0, 3, 5], [1, 4], [6]]


class _JobRecordingEmbedder(LocalOnnxEmbedder):
    """The local model on one lane, recording the texts of each job a lane takes."""

    def __init__(self, model_path: Path) -> None:
        super().__init__(model_path, lanes=1)
        self.jobs: list[list[str]] = []

    def _embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        self.jobs.append(list(texts))
        return super()._embed_sync(texts)


async def test_requests_share_a_job_only_where_a_model_call_embeds_several_texts(
    model_cache_dir: Path,
) -> None:
    """The quantized model embeds one text per call, so a query queued behind two memories
    gains nothing from joining their job, and would be answered only after both."""
    texts = [
        "a long memory about retries, backoff and the rate limiter of the payments API",
        "another long memory about the deploy pipeline and its flaky integration step",
        "rate limits",
    ]
    quantized = _JobRecordingEmbedder(local_model_path("dynamic", model_cache_dir))
    packaged = _JobRecordingEmbedder(local_model_path("weights"))
    try:
        for embedder in (quantized, packaged):
            # All three are queued before the lane takes its first job.
            vectors = await asyncio.gather(*(embedder.embed([text]) for text in texts))
            assert [len(v) for v in vectors] == [1, 1, 1]
    finally:
        await quantized.aclose()
        await packaged.aclose()
    assert quantized.jobs == [[text] for text in texts]
    assert packaged.jobs == [texts]  # several texts per call: they share calls


def test_the_default_provider_is_the_local_model() -> None:
    assert Settings().embedding_provider == "local"


def test_the_quantized_model_is_made_once_and_reused(model_cache_dir: Path) -> None:
    first = local_model_path("dynamic", model_cache_dir)
    made_at = first.stat().st_mtime_ns
    again = dynamic_int8_copy(packaged_model_path(), model_cache_dir)
    assert again == first != packaged_model_path()
    assert again.stat().st_mtime_ns == made_at
    assert [p.name for p in model_cache_dir.iterdir()] == [first.name]  # no work files left


async def test_the_quantized_model_embeds_like_the_packaged_one(embedder: Embedder) -> None:
    texts = [
        "checkRateLimit returns 429 after 100 requests per minute",
        "TypeError: Cannot read property 'map' of undefined in UserList",
        "We chose PostgreSQL over MongoDB for transactional guarantees",
        "what did Caroline paint last summer?",
    ]
    packaged = LocalOnnxEmbedder(local_model_path("weights"))
    assert isinstance(embedder, LocalOnnxEmbedder)
    assert "dynamic-int8" in embedder.model_path.name
    assert "dynamic-int8" not in packaged.model_path.name
    # One model, whichever its file: the name stored with the vectors is the same.
    assert embedder.name == packaged.name == "local:all-MiniLM-L6-v2"
    cosines = np.sum(
        np.array(await embedder.embed(texts)) * np.array(await packaged.embed(texts)), axis=1
    )
    assert cosines.min() > 0.98


def test_a_cache_that_cannot_be_written_falls_back_to_the_packaged_model(tmp_path: Path) -> None:
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    assert local_model_path("dynamic", not_a_directory) == packaged_model_path()


def test_settings_choose_the_model_file(model_cache_dir: Path) -> None:
    dynamic = build_embedder(Settings(model_cache_dir=model_cache_dir))
    weights = build_embedder(Settings(embedding_quantization="weights"))
    assert isinstance(dynamic, LocalOnnxEmbedder) and isinstance(weights, LocalOnnxEmbedder)
    assert dynamic.model_path == local_model_path("dynamic", model_cache_dir)
    assert weights.model_path == packaged_model_path()


def test_a_dimension_other_than_the_models_is_refused(model_cache_dir: Path) -> None:
    settings = Settings(embedding_dim=128, model_cache_dir=model_cache_dir)
    with pytest.raises(ValueError, match="EMBEDDING_DIM=128"):
        build_embedder(settings)


async def test_hash_embedder_is_deterministic_and_unit_length() -> None:
    embedder = HashEmbedder(64)
    a, b, c = await embedder.embed(["rate limit", "rate limit", "unrelated words"])
    assert a == b
    assert np.isclose(np.linalg.norm(a), 1.0)
    assert a != c


def _fake_endpoint(status: int = 200, dim: int = 8) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/embeddings"
        assert request.headers["authorization"] == "Bearer secret"
        inputs = json.loads(request.content)["input"]
        if status != 200:
            return httpx.Response(status, json={"error": "provider says no, key=secret"})
        data = [
            {"index": i, "embedding": [float(len(text))] + [1.0] * (dim - 1)}
            for i, text in reversed(list(enumerate(inputs)))
        ]
        return httpx.Response(200, json={"data": data})

    return httpx.MockTransport(handler)


async def test_openai_provider_normalises_and_orders_by_index() -> None:
    embedder = OpenAIEmbedder("http://x/v1", "m", 8, "secret", 5, transport=_fake_endpoint())
    first, second = await embedder.embed(["ab", "abcd"])
    assert np.isclose(np.linalg.norm(first), 1.0)
    assert first[0] < second[0]  # index 0 is "ab", though the endpoint answered in reverse


@pytest.mark.parametrize("status", [429, 500])
async def test_openai_provider_failure_is_an_embedding_error_without_provider_text(
    status: int,
) -> None:
    embedder = OpenAIEmbedder("http://x/v1", "m", 8, "secret", 5, transport=_fake_endpoint(status))
    with pytest.raises(EmbeddingError) as failure:
        await embedder.embed(["x"])
    assert "secret" not in str(failure.value)


async def test_openai_provider_rejects_a_wrong_dimension() -> None:
    embedder = OpenAIEmbedder("http://x/v1", "m", 16, "secret", 5, transport=_fake_endpoint(dim=8))
    with pytest.raises(EmbeddingError, match="dimension 8"):
        await embedder.embed(["x"])


async def test_the_l3_model_and_both_models_side_by_side(
    embedder: Embedder, model_cache_dir: Path
) -> None:
    l3 = LocalOnnxEmbedder(
        local_model_path("dynamic", model_cache_dir, "minilm-l3"), model="minilm-l3"
    )
    assert (l3.name, l3.dim) == ("local:paraphrase-MiniLM-L3-v2", 384)
    texts = [
        "the upload test was flaky",
        "a shared temp directory made the upload test fail at random",
        "bananas are yellow",
    ]
    alone = np.array(await l3.embed(texts))
    assert np.allclose(np.linalg.norm(alone, axis=1), 1.0, atol=1e-5)
    assert alone[0] @ alone[1] > alone[0] @ alone[2] + 0.2  # it reads meaning
    pair = ConcatEmbedder([embedder, l3])
    assert (pair.dim, pair.name) == (768, "local:all-MiniLM-L6-v2+local:paraphrase-MiniLM-L3-v2")
    joined = np.array(await pair.embed(texts))
    first = np.array(await embedder.embed(texts))
    # One dot product of the joined vectors is the mean of the two models' cosines.
    assert joined[0] @ joined[1] == pytest.approx((first[0] @ first[1] + alone[0] @ alone[1]) / 2)
    cache = {"AGENT_MEMORY_CACHE_DIR": model_cache_dir}
    chosen = Settings(embedding_model="minilm-l6+l3", embedding_dim=768, **cache)  # type: ignore[arg-type]
    assert build_embedder(chosen).name == pair.name
    with pytest.raises(ValueError, match="EMBEDDING_DIM=768"):
        build_embedder(Settings(embedding_model="minilm-l6+l3", **cache))  # type: ignore[arg-type]
