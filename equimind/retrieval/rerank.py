"""Cross-encoder rerankers implementing ``protocols.Reranker``.

``CrossEncoderReranker`` loads a sentence-transformers ``CrossEncoder`` lazily and strictly offline
(``local_files_only=True``). When the model cannot be loaded it reports ``available = False`` with the reason and
refuses to score: the caller keeps the fused order and records the degradation — a reranker never invents scores.
``FixedScoreReranker`` is the fake for unit tests.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from equimind.errors import ConfigError

log = logging.getLogger(__name__)


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a local cross-encoder; higher is more relevant."""

    def __init__(self, model_name: str, batch_size: int = 32, device: str = "cpu", max_length: int = 512) -> None:
        if batch_size <= 0:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size}")
        self.name = model_name
        self.batch_size = batch_size
        self.device = device
        self.max_length = max_length
        self._model: Any = None
        self._reason: str | None = None
        self._tried = False
        self._lock = threading.Lock()

    def _ensure_loaded(self) -> None:
        with self._lock:
            if self._tried:
                return
            self._tried = True
            try:
                from sentence_transformers import CrossEncoder

                self._model = CrossEncoder(
                    self.name, device=self.device, local_files_only=True, max_length=self.max_length
                )
            except Exception as exc:
                self._model = None
                self._reason = self._explain(exc)
                log.info("reranker unavailable: %s", self._reason)

    def _explain(self, exc: Exception) -> str:
        if isinstance(exc, ImportError):
            return f"sentence-transformers is not importable ({exc}); run `pip install -e .`"
        if not Path(self.name).exists() and isinstance(exc, OSError):
            return (
                f"model {self.name} not found locally; no network (models are never downloaded) — "
                "set EQUIMIND_RERANK_MODEL to a local cross-encoder directory"
            )
        return f"model {self.name} could not be loaded ({type(exc).__name__}: {exc})"

    @property
    def available(self) -> bool:
        self._ensure_loaded()
        return self._model is not None

    @property
    def unavailable_reason(self) -> str | None:
        self._ensure_loaded()
        return self._reason

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self._ensure_loaded()
        if self._model is None:
            raise ConfigError(f"reranker unavailable: {self._reason}")
        if not texts:
            return []
        pairs = [(query, t) for t in texts]
        out = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)
        return [float(x) for x in out.reshape(len(texts), -1)[:, 0]]


class FixedScoreReranker:
    """Fake reranker: scores come from a mapping (text -> score, default for unknown texts) or a function."""

    def __init__(
        self,
        scores: Mapping[str, float] | Callable[[str, str], float],
        default: float = 0.0,
        name: str = "fixed-score",
        unavailable: str | None = None,
    ) -> None:
        self.name = name
        self._scores = scores
        self._default = default
        self._unavailable = unavailable
        self.calls: list[tuple[str, int]] = []

    @property
    def available(self) -> bool:
        return self._unavailable is None

    @property
    def unavailable_reason(self) -> str | None:
        return self._unavailable

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if self._unavailable is not None:
            raise ConfigError(f"reranker unavailable: {self._unavailable}")
        self.calls.append((query, len(texts)))
        if callable(self._scores):
            fn = self._scores
            return [float(fn(query, t)) for t in texts]
        table = self._scores
        return [float(table.get(t, self._default)) for t in texts]
