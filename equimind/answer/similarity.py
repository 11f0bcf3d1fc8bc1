"""Meaning, not only words: the cosine similarity of the question and each answer unit under the store's embedding
model (all-MiniLM-L6-v2 by default), for the extractive answerer (``extract.score_units``).

Term coverage misses an answer written in other words ("How much did Meta pour into Reality Labs?" / "Reality Labs
... operating loss of $17.73 billion"; "In which city is the head office?" / "principal executive offices ...
Cupertino, California"). The sentence embedding model the store already searches with places a question near the
sentence that answers it (it was trained on question-answer pairs among others), whatever words either uses.

A unit's vector depends only on its text, and a unit is a span of a document whose id is the hash of its text, so
vectors are cached per (document, span) in a process-wide LRU: a second question over the same passages embeds only
the question. When the embedding model cannot be built, ``UnitSimilarity.scores`` returns ``None`` with the reason in
``problem``: the answerer then scores by term coverage alone and says so in the answer's ``degraded`` list.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from equimind.core.errors import EquiMindError
from equimind.core.lru import LRU

if TYPE_CHECKING:
    from equimind.answer.units import Unit
    from equimind.core.protocols import Embedder

log = logging.getLogger(__name__)
CACHE_UNITS = 50_000  # 384 float32 each: ~77 MB at most


class UnitSimilarity:
    """``scores(question, units)`` -> one cosine per unit (the embedder's vectors are L2-normalised)."""

    def __init__(self, embedder: Callable[[], Embedder]) -> None:
        self._embedder = embedder  # called on first use: building the model costs seconds, a refusal needs none
        self._vectors: LRU[tuple[str, str, int, int], np.ndarray] = LRU(CACHE_UNITS)
        self.problem: str | None = None

    def scores(self, question: str, units: Sequence[Unit]) -> list[float] | None:
        if not units:
            return []
        try:
            model = self._embedder()
        except EquiMindError as exc:
            self.problem = f"unit similarity unavailable ({exc}); scored by term coverage alone"
            log.warning("answer: %s", self.problem)
            return None
        keys = [(model.name, u.doc_id, u.span.start, u.span.end) for u in units]
        cached = [self._vectors.get(k) for k in keys]
        todo = [i for i, v in enumerate(cached) if v is None]
        fresh = dict(zip(todo, model.embed([units[i].context for i in todo]), strict=True)) if todo else {}
        for i, v in fresh.items():
            self._vectors.put(keys[i], v)
        matrix = np.stack([fresh[i] if v is None else v for i, v in enumerate(cached)])
        return [float(x) for x in matrix @ model.embed_query(question)]
