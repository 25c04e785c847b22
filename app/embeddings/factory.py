"""Choose the embedder from configuration."""

from __future__ import annotations

from app.config import Settings
from app.embeddings.base import Embedder


def build_embedder(settings: Settings) -> Embedder:
    """The provider, and for the local one the model (EMBEDDING_MODEL)."""
    if settings.embedding_provider == "hash":
        from app.embeddings.hashing import HashEmbedder

        return HashEmbedder(settings.embedding_dim)
    if settings.embedding_provider == "openai":
        from app.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder(
            base_url=settings.openai_base_url,
            model=settings.openai_embedding_model,
            dim=settings.embedding_dim,
            api_key=settings.openai_api_key,
            timeout_s=settings.openai_timeout_s,
        )
    from app.embeddings.concat import ConcatEmbedder
    from app.embeddings.local import LocalOnnxEmbedder
    from app.embeddings.model_files import ModelName, local_model_path

    def local(model: ModelName, lanes: int) -> LocalOnnxEmbedder:
        given = settings.embedding_model_path if model == settings.embedding_model else None
        path = given or local_model_path(
            settings.embedding_quantization, settings.model_cache_dir, model
        )
        return LocalOnnxEmbedder(path, settings.embedding_threads, lanes, model)

    lanes = settings.embedding_lanes
    embedder: Embedder
    if settings.embedding_model == "minilm-l6+l3":
        # Each text goes through both models: each gets the lanes one model would have.
        embedder = ConcatEmbedder([local("minilm-l6", lanes), local("minilm-l3", lanes)])
    else:
        embedder = local(settings.embedding_model, lanes)
    if settings.embedding_dim != embedder.dim:
        raise ValueError(
            f"EMBEDDING_DIM={settings.embedding_dim} but the local model produces "
            f"{embedder.dim}-dimensional vectors; set EMBEDDING_DIM={embedder.dim}"
        )
    return embedder
