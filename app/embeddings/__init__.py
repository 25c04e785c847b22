"""Text embedding providers behind one small interface."""

from app.embeddings.base import Embedder, EmbeddingError
from app.embeddings.factory import build_embedder

__all__ = ["Embedder", "EmbeddingError", "build_embedder"]
