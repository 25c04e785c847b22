"""Two models as one: each text's unit vectors side by side, scaled by 1/sqrt(n), so that
one dot product of the joined vectors is the mean of the models' cosines."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

from app.embeddings.base import Embedder


class ConcatEmbedder(Embedder):
    def __init__(self, parts: Sequence[Embedder]) -> None:
        self.parts = list(parts)
        self.dim = sum(part.dim for part in self.parts)
        self.name = "+".join(part.name for part in self.parts)
        self._scale = 1.0 / math.sqrt(len(self.parts))

    async def embed(
        self, texts: Sequence[str], *, tenant: str = "", interactive: bool = False
    ) -> list[list[float]]:
        # The models run at once, each on its own lanes.
        answers = await asyncio.gather(
            *(part.embed(texts, tenant=tenant, interactive=interactive) for part in self.parts)
        )
        return [
            [x * self._scale for vectors in per_text for x in vectors]
            for per_text in zip(*answers, strict=True)
        ]

    async def aclose(self) -> None:
        for part in self.parts:
            await part.aclose()
