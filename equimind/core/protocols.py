"""Protocols for the injectable components (embedder, tokenizer, reranker). Real and fake implementations both
satisfy these; stages receive them through constructors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens the way the embedder does."""

    name: str

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character offsets [start, end) of each token of ``text`` (special tokens excluded)."""
        ...

    def count(self, text: str) -> int:
        ...


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """(len(texts), dim) float32, L2-normalised."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """(dim,) float32, L2-normalised."""
        ...


@runtime_checkable
class Reranker(Protocol):
    name: str

    @property
    def available(self) -> bool:
        ...

    @property
    def unavailable_reason(self) -> str | None:
        ...

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text (higher is better). Raises if not available."""
        ...
