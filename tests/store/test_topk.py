"""store.topk: best first, ties by id, and the same members and order whatever the row order (two hosts that laid
out the same chunks differently must return the same top k)."""

from __future__ import annotations

import numpy as np

from equimind.store.topk import top_k


def test_ties_are_broken_by_id_and_do_not_depend_on_row_order() -> None:
    rng = np.random.default_rng(3)
    ids = [f"c{i:03d}" for i in range(60)]
    scores = rng.integers(0, 5, size=60).astype(float)  # many exact ties, across the cut as well
    want = sorted(range(60), key=lambda j: (-scores[j], ids[j]))[:7]
    assert [ids[j] for j in top_k(scores, lambda j: ids[j], 7)] == [ids[j] for j in want]
    for seed in range(5):
        perm = np.random.default_rng(seed).permutation(60)
        got = top_k(scores[perm], lambda j, perm=perm: ids[int(perm[j])], 7)
        assert [ids[int(perm[j])] for j in got] == [ids[j] for j in want]


def test_small_and_empty_inputs() -> None:
    assert top_k(np.array([]), str, 3) == [] and top_k(np.array([1.0]), str, 0) == []
    assert top_k(np.array([0.5, 2.0]), lambda j: "ab"[j], 5) == [1, 0]
