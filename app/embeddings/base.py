"""The provider interface: texts in, unit-length float vectors out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence


class EmbeddingError(RuntimeError):
    """The provider could not embed; the message is safe to log, not to show clients."""


class Embedder(ABC):
    name: str
    dim: int

    @abstractmethod
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in input order."""

    async def embed_one(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients or sessions."""
