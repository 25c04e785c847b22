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
    async def embed(
        self, texts: Sequence[str], *, tenant: str = "", interactive: bool = False
    ) -> list[list[float]]:
        """One unit-length vector per text, in input order. `tenant` and `interactive`
        (a search waiting on it, not a write) let a provider with a queue share it fairly."""

    async def embed_one(
        self, text: str, *, tenant: str = "", interactive: bool = False
    ) -> list[float]:
        return (await self.embed([text], tenant=tenant, interactive=interactive))[0]

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients or sessions."""
