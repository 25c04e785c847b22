"""Any OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM, TEI)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import httpx

from app.embeddings.base import Embedder, EmbeddingError


class OpenAIEmbedder(Embedder):
    def __init__(
        self,
        base_url: str,
        model: str,
        dim: int,
        api_key: str | None,
        timeout_s: float,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = f"openai:{model}"
        self.dim = dim
        self._model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s, transport=transport
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        body = {"model": self._model, "input": list(texts), "dimensions": self.dim}
        try:
            response = await self._client.post("/embeddings", json=body)
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
        except (httpx.HTTPError, KeyError, ValueError, TypeError) as exc:
            raise EmbeddingError(f"embedding endpoint failed: {type(exc).__name__}") from exc
        vectors: list[list[float]] = []
        for item in data:
            vec = [float(v) for v in item["embedding"]]
            if len(vec) != self.dim:
                raise EmbeddingError(f"endpoint returned dimension {len(vec)}, expected {self.dim}")
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            vectors.append([v / norm for v in vec])
        if len(vectors) != len(texts):
            raise EmbeddingError("endpoint returned a different number of vectors")
        return vectors

    async def aclose(self) -> None:
        await self._client.aclose()
