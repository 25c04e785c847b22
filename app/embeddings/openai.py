"""Any OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM, TEI).

A failing endpoint is given a rest: after a failure, calls fail at once (the memory is
stored with its embedding pending, search goes keyword-only) until a cooldown passes:
the endpoint's Retry-After when it sends one, else 1, 2, 4 ... up to 60 seconds. So a slow
or rate-limited provider costs one timeout, not one per request, and is not hammered."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = f"openai:{model}"
        self.dim = dim
        self._model = model
        self._clock = clock
        self._resting_until = 0.0
        self._failures_in_a_row = 0
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s, transport=transport
        )

    async def embed(
        self, texts: Sequence[str], *, tenant: str = "", interactive: bool = False
    ) -> list[list[float]]:
        if not texts:
            return []
        if self._clock() < self._resting_until:
            raise EmbeddingError("embedding endpoint is resting after a failure")
        body = {"model": self._model, "input": list(texts), "dimensions": self.dim}
        try:
            response = await self._client.post("/embeddings", json=body)
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
        except httpx.HTTPStatusError as exc:
            self._rest(_retry_after_s(exc.response))
            raise EmbeddingError(f"embedding endpoint answered {exc.response.status_code}") from exc
        except (httpx.HTTPError, KeyError, ValueError, TypeError) as exc:
            self._rest(None)
            raise EmbeddingError(f"embedding endpoint failed: {type(exc).__name__}") from exc
        self._failures_in_a_row = 0
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

    def _rest(self, retry_after_s: float | None) -> None:
        self._failures_in_a_row += 1
        backoff = min(MAX_REST_S, 2.0 ** (self._failures_in_a_row - 1))
        rest = min(MAX_REST_S, retry_after_s) if retry_after_s is not None else backoff
        self._resting_until = self._clock() + rest

    async def aclose(self) -> None:
        await self._client.aclose()


MAX_REST_S = 60.0


def _retry_after_s(response: httpx.Response) -> float | None:
    """Retry-After in seconds (the HTTP-date form is rare for APIs and falls back)."""
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None
