"""An ONNX Runtime embedder for a local sentence-transformers model, giving the answers of
``SentenceTransformerEmbedder`` (fp32: cosine 1.0 to torch up to float rounding; int8: measured in
``benchmarks/embed_backends.py``).

What sentence-transformers does, and this module repeats, for a Transformer -> Pooling -> (Normalize) model:
1. tokenise with the model's own ``tokenizer.json`` (the fast tokenizer transformers would load), text stripped,
   truncated to ``max_seq_length`` of ``sentence_bert_config.json`` and padded to the longest text of the batch;
   batches are formed after sorting texts by length (longest first), as ``SentenceTransformer.encode`` does;
2. run the transformer (the ONNX graph of ``retrieval/onnx_export.py``: last hidden state);
3. pool as the model's ``modules.json`` -> Pooling ``config.json`` says (mean of the unmasked tokens for
   all-MiniLM-L6-v2; CLS and max are also supported), and L2-normalise when the model has a Normalize module.
The search protocol wants unit vectors, so the output is always L2-normalised (as the torch embedder's
``normalize_embeddings=True``).

``onnxruntime`` and ``tokenizers`` are imported only when an embedder is built; torch is imported only when the export
has to be built (once per ``onnx_cache_dir``, by default once per home): a process that embeds its queries with a
built export loads neither torch nor transformers (~9 s of imports on this machine).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from equimind.core.errors import ConfigError
from equimind.core.protocols import Vectors
from equimind.embedding.onnx_export import TORCH_FIX, OnnxPrecision, ensure_export

log = logging.getLogger(__name__)


SESSION_BATCH = 16
"""Texts per ONNX Runtime call. Measured on 455 NVDA 10-K product texts (~220 tokens): batch 16 / 32 / 64 took
25.2 / 26.8 / 29.6 s with peak RSS 627 / 867 / 1406 MB — the runtime's arena keeps the largest batch's attention
buffers (64 x 12 heads x 256 x 256 floats), so small batches are as fast and far smaller."""


class PoolMode(StrEnum):
    MEAN = "mean"
    CLS = "cls"
    MAX = "max"


_POOL_KEYS = {"pooling_mode_mean_tokens": PoolMode.MEAN, "pooling_mode_cls_token": PoolMode.CLS,
              "pooling_mode_max_tokens": PoolMode.MAX}


@dataclass(frozen=True)
class PoolingSpec:
    """How the model turns token states into one vector, read from its sentence-transformers config files."""

    mode: PoolMode
    normalize: bool
    max_seq_length: int
    do_lower_case: bool = False


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path} ({exc}); the ONNX backend needs a sentence-transformers model "
                          f"directory, {TORCH_FIX}") from exc


def read_pooling(model_dir: Path) -> PoolingSpec:
    """The pooling of ``model_dir`` from ``modules.json``; a module chain other than Transformer -> Pooling ->
    [Normalize], or a pooling mode other than mean / CLS / max, raises ``ConfigError``."""
    modules = _json(model_dir / "modules.json")
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ConfigError(f"model {model_dir} has modules {kinds}; the ONNX backend supports Transformer -> "
                          f"Pooling [-> Normalize] only, {TORCH_FIX}")
    pooling = _json(model_dir / modules[1]["path"] / "config.json")
    modes = [mode for key, mode in _POOL_KEYS.items() if pooling.get(key)]
    others = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v and k not in _POOL_KEYS]
    if len(modes) != 1 or others:
        raise ConfigError(f"model {model_dir} pools with {modes + others}; the ONNX backend supports exactly one "
                          f"of mean / cls / max, {TORCH_FIX}")
    bert = _json(model_dir / modules[0].get("path", "") / "sentence_bert_config.json")
    return PoolingSpec(mode=modes[0], normalize=kinds[-1] == "Normalize",
                       max_seq_length=int(bert.get("max_seq_length", 512)),
                       do_lower_case=bool(bert.get("do_lower_case", False)))


def pool(hidden: np.ndarray[Any, Any], mask: np.ndarray[Any, Any], mode: PoolMode) -> np.ndarray[Any, Any]:
    """(batch, seq, dim) token states + (batch, seq) attention mask -> (batch, dim), as sentence-transformers'
    Pooling: mean = sum of unmasked states / max(count, 1e-9); CLS = the first token; max = max over unmasked."""
    m = mask.astype(hidden.dtype)[..., None]
    if mode is PoolMode.CLS:
        out: np.ndarray[Any, Any] = hidden[:, 0]
    elif mode is PoolMode.MAX:
        out = np.where(m > 0, hidden, np.finfo(hidden.dtype).min).max(axis=1)
    else:
        out = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
    return out


def l2_normalise(m: np.ndarray[Any, Any]) -> Vectors:
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    out: Vectors = (m / np.clip(norms, 1e-12, None)).astype(np.float32, copy=False)
    return out


def _import_onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise ConfigError(f"EQUIMIND_EMBED_BACKEND=onnx needs onnxruntime ({exc}); run `pip install "
                          f"onnxruntime==1.32.0` {TORCH_FIX}") from exc
    return onnxruntime


class OnnxEmbedder:
    """``protocols.Embedder`` over an ONNX Runtime session of a sentence-transformers model (CPU).

    ``name`` is the embedding stamp. fp32 computes the torch model's own vectors (cosine to sentence-transformers
    ≥ 0.99999, tested), so it carries the model's name and reads and extends a torch-built store as it is; int8
    computes other vectors (mean cosine ~0.99), so it carries the model's name plus ``+onnx-int8`` and a store of the
    other kind is reindexed, never mixed (ADR 0008)."""

    def __init__(self, model_dir: Path | str, cache_root: Path | str, *, model_name: str,
                 precision: OnnxPrecision = OnnxPrecision.FP32, batch_size: int = 64,
                 num_threads: int | None = None) -> None:
        if batch_size <= 0:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size}")
        if num_threads is not None and num_threads <= 0:
            raise ConfigError(f"num_threads must be a positive integer, got {num_threads}")
        self.model_dir = Path(model_dir)
        self.precision = OnnxPrecision(precision)
        self.batch_size = batch_size
        self.spec = read_pooling(self.model_dir)
        self.name = model_name if self.precision is OnnxPrecision.FP32 else f"{model_name}+onnx-{self.precision.value}"
        ort = _import_onnxruntime()  # before building anything: a missing runtime fails fast
        self._tokenizer = self._load_tokenizer()
        self.onnx_path = ensure_export(self.model_dir, Path(cache_root), model_name, self.precision)
        self._session = self._load_session(ort, num_threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dim: int = int(self._run(["dimension probe"]).shape[1])

    def _load_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        path = self.model_dir / "tokenizer.json"
        if not path.is_file():
            raise ConfigError(f"model {self.model_dir} has no tokenizer.json (a fast tokenizer is needed by the ONNX "
                              f"backend), {TORCH_FIX}")
        tok = Tokenizer.from_file(str(path))
        tok.enable_truncation(max_length=self.spec.max_seq_length)  # tokenizer.json's own 128 is not ST's length
        pad = tok.padding or {}
        tok.enable_padding(pad_id=int(pad.get("pad_id", 0)), pad_token=str(pad.get("pad_token", "[PAD]")),
                           pad_type_id=int(pad.get("pad_type_id", 0)))  # to the longest text of the batch
        return tok

    def _load_session(self, ort: Any, num_threads: int | None) -> Any:
        opts = ort.SessionOptions()
        if num_threads is not None:
            opts.intra_op_num_threads = num_threads
        try:
            return ort.InferenceSession(str(self.onnx_path), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise ConfigError(f"onnxruntime cannot load {self.onnx_path} ({type(exc).__name__}: {exc}); delete "
                              f"{self.onnx_path.parent} to rebuild the export, {TORCH_FIX}") from exc

    def _run(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        prepared = [t.strip().lower() if self.spec.do_lower_case else t.strip() for t in texts]
        encs = self._tokenizer.encode_batch(prepared)
        feeds = {"input_ids": np.asarray([e.ids for e in encs], dtype=np.int64),
                 "attention_mask": np.asarray([e.attention_mask for e in encs], dtype=np.int64),
                 "token_type_ids": np.asarray([e.type_ids for e in encs], dtype=np.int64)}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        return pool(np.asarray(hidden, dtype=np.float32), feeds["attention_mask"], self.spec.mode)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")  # SentenceTransformer.encode's batching
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        step = min(self.batch_size, SESSION_BATCH)
        for start in range(0, len(texts), step):
            idx = order[start : start + step]
            out[idx] = self._run([texts[i] for i in idx])
        return np.ascontiguousarray(l2_normalise(out))

    def embed_query(self, text: str) -> Vectors:
        vec: Vectors = self.embed([text])[0]
        return vec
