"""Stand-ins for the embedder that let a test act while a request is inside its route."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from app.embeddings.hashing import HashEmbedder


class GatedEmbedder(HashEmbedder):
    """Feature hashing (384 dimensions) that holds every call until the test sets `gate`;
    `entered` tells the test that a call is waiting there."""

    def __init__(self) -> None:
        super().__init__(384)
        self.entered, self.gate = asyncio.Event(), asyncio.Event()

    async def embed(
        self, texts: Sequence[str], *, tenant: str = "", interactive: bool = False
    ) -> list[list[float]]:
        self.entered.set()
        await self.gate.wait()
        return await super().embed(texts)
