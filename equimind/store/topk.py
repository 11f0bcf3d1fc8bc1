"""Top-k selection shared by the BM25 index and the exact-search matrix: best score first, ties broken by chunk id.

Breaking ties by id (not by row) makes a ranking independent of how an index laid out its rows. Two hosts that built
the same chunks in a different row order (the ingest pipeline's BM25 against a host's own rebuild) then return the
same top k. That includes which of several equal scores make the cut: every candidate tied with the k-th score is
ranked before the list is cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def top_k(scores: np.ndarray[Any, Any], label: Callable[[int], str], k: int) -> list[int]:
    """Positions in ``scores`` of the ``k`` largest, best first; ``label(j)`` (the chunk id) breaks ties."""
    n = int(scores.size)
    if n == 0 or k <= 0:
        return []
    if n > k:
        kth = np.partition(scores, n - k)[n - k]  # the k-th largest score
        candidates = np.flatnonzero(scores >= kth)
    else:
        candidates = np.arange(n)
    return sorted((int(j) for j in candidates), key=lambda j: (-float(scores[j]), label(j)))[:k]
