"""RRF maths against a hand-computed example."""

from __future__ import annotations

import pytest

from equimind.core.errors import ConfigError
from equimind.retrieval.fusion import rrf_fuse


def test_hand_computed_example() -> None:
    fused = rrf_fuse([["a", "b", "c"], ["b", "c", "d"]], k=60)
    # a: 1/61; b: 1/62 + 1/61; c: 1/63 + 1/62; d: 1/63
    assert [f.id for f in fused] == ["b", "c", "a", "d"]
    by_id = {f.id: f for f in fused}
    assert by_id["b"].score == pytest.approx(1 / 62 + 1 / 61)
    assert by_id["c"].score == pytest.approx(1 / 63 + 1 / 62)
    assert by_id["a"].score == pytest.approx(1 / 61)
    assert by_id["d"].score == pytest.approx(1 / 63)
    assert by_id["b"].ranks == (2, 1) and by_id["a"].ranks == (1, None) and by_id["d"].ranks == (None, 3)


def test_weights_k_and_ties() -> None:
    fused = rrf_fuse([["a"], ["b"]], k=1, weights=[1.0, 3.0])
    assert [(f.id, f.score) for f in fused] == [("b", pytest.approx(1.5)), ("a", pytest.approx(0.5))]
    tie = rrf_fuse([["x", "y"], ["y", "x"]])
    assert [f.id for f in tie] == ["x", "y"]  # equal scores, equal best rank: broken by id (stable)
    dup = rrf_fuse([["a", "a", "b"]], k=60)
    assert dup[0].score == pytest.approx(1 / 61) and dup[1].score == pytest.approx(1 / 63)
    assert rrf_fuse([]) == [] and rrf_fuse([[], []]) == []


def test_invalid_arguments() -> None:
    with pytest.raises(ConfigError):
        rrf_fuse([["a"]], k=0)
    with pytest.raises(ConfigError):
        rrf_fuse([["a"], ["b"]], weights=[1.0])
