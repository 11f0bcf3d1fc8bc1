"""Cross-encoder rerankers implementing ``protocols.Reranker``.

``CrossEncoderReranker`` loads a sentence-transformers ``CrossEncoder`` lazily and strictly offline
(``local_files_only=True``): from ``path`` (a copy pulled into EQUIMIND_HOME/models) when given, else from its name
(a local directory or the Hugging Face cache). When the model cannot be loaded it reports ``available = False`` with
the reason and the command that fixes it (``unavailable_fix``), and refuses to score: the caller keeps the fused
order and records the degradation — a reranker never invents scores.
``FixedScoreReranker`` is the fake for unit tests.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from equimind.core.degraded import Degradation
from equimind.core.errors import ConfigError

log = logging.getLogger(__name__)

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_DEFAULT = "cross-encoder/ms-marco-MiniLM-L6-v2"


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a local cross-encoder; higher is more relevant."""

    def __init__(self, model_name: str, batch_size: int = 32, device: str = "cpu", max_length: int = 512,
                 path: Path | None = None, pulled_problem: str | None = None) -> None:
        if batch_size <= 0:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size}")
        self.name = model_name
        self.path = path
        self.pulled_problem = pulled_problem  # why a copy in EQUIMIND_HOME/models was skipped, if one was
        self.batch_size = batch_size
        self.device = device
        self.max_length = max_length
        self._model: Any = None
        self._reason: str | None = None
        self._fix: str | None = None
        self._tried = False
        self._lock = threading.Lock()

    def _ensure_loaded(self) -> None:
        with self._lock:
            if self._tried:
                return
            self._tried = True
            try:
                if not self._locally_present():  # found absent without importing torch (~9 s of a cold start)
                    raise OSError(f"{self.name} is neither a local directory nor in the Hugging Face cache")
                from sentence_transformers import CrossEncoder

                self._model = CrossEncoder(
                    str(self.path or self.name), device=self.device, local_files_only=True, max_length=self.max_length
                )
            except Exception as exc:
                self._model = None
                self._reason = self._explain(exc)
                self._fix = self._remedy(exc)
                log.info("reranker unavailable: %s", self._reason)

    def _locally_present(self) -> bool:
        """Whether loading can possibly succeed offline: a given path or directory exists, or the hub id's config is
        in the local Hugging Face cache. A False answer is exactly the case CrossEncoder would fail on with OSError."""
        if self.path is not None or Path(self.name).exists() or not _HUB_ID.fullmatch(self.name):
            return True  # let the loader decide (and explain) anything but an absent hub id
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(self.name, "config.json"), str)

    def _explain(self, exc: Exception) -> str:
        if isinstance(exc, ImportError):
            return f"sentence-transformers is not importable ({exc})"
        if self.path is None and not Path(self.name).exists() and isinstance(exc, OSError):
            found = f"model {self.name} not found locally; no network is used to load models"
            return f"{self.pulled_problem}; {found}" if self.pulled_problem else found
        return f"model {self.path or self.name} could not be loaded ({type(exc).__name__}: {exc})"

    def _remedy(self, exc: Exception) -> str:
        if isinstance(exc, ImportError):
            return "run `pip install -e .`"
        if self.path is None and not Path(self.name).exists() and isinstance(exc, OSError):
            if _HUB_ID.fullmatch(self.name):
                return pull_command(self.name)
            return (f"set EQUIMIND_RERANK_MODEL to an existing cross-encoder directory, or {pull_command(_DEFAULT)} "
                    "and unset it")
        return f"run `equimind models verify {self.name}`, then `equimind models pull {self.name}` to replace it"

    @property
    def available(self) -> bool:
        self._ensure_loaded()
        return self._model is not None

    @property
    def unavailable_reason(self) -> str | None:
        self._ensure_loaded()
        return self._reason

    @property
    def unavailable_fix(self) -> str | None:
        """The command that lifts the degradation (None when the model loaded)."""
        self._ensure_loaded()
        return self._fix

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self._ensure_loaded()
        if self._model is None:
            raise ConfigError(f"reranker unavailable: {self._reason}")
        if not texts:
            return []
        pairs = [(query, t) for t in texts]
        out = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)
        return [float(x) for x in out.reshape(len(texts), -1)[:, 0]]


def pull_command(model: str) -> str:
    return f"run `equimind models pull {model}`"


def unavailable_line(reranker: object | None, reason: str, fix: str | None = None) -> Degradation:
    """The degraded line of an unavailable reranker: ``rerank: unavailable (<reason>) — <fix>``. The fix is ``fix``
    or the reranker's ``unavailable_fix`` (``CrossEncoderReranker`` has one; fakes may not)."""
    if fix is None and reranker is not None:
        fix = getattr(reranker, "unavailable_fix", None)
    status = f"unavailable ({reason})"
    return Degradation(capability="rerank", reason=f"{status} — {fix}" if fix else status)


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
