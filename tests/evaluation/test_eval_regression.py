"""The CI regression gate: noise floor of one question, and (slow) the real fast subset against the baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from equimind.evaluation.regression import compare_to_baseline, default_baseline_path, run_gate


def test_a_drop_within_one_question_passes() -> None:
    ok, lines = compare_to_baseline({"hybrid/recall_any@10": 0.70}, 20, {"hybrid/recall_any@10": 0.75})
    assert ok
    assert lines[0] == "noise floor = 1/20 = 0.0500"


def test_a_drop_beyond_one_question_fails() -> None:
    ok, lines = compare_to_baseline({"hybrid/recall_any@10": 0.69}, 20, {"hybrid/recall_any@10": 0.75})
    assert not ok
    assert lines[1].startswith("FAIL hybrid/recall_any@10")


def test_a_missing_metric_fails_and_a_rise_passes() -> None:
    ok, _ = compare_to_baseline({}, 10, {"dense/mrr@10": 0.5})
    assert not ok
    ok, _ = compare_to_baseline({"dense/mrr@10": 0.9}, 10, {"dense/mrr@10": 0.5})
    assert ok


def test_committed_baseline_is_well_formed() -> None:
    base = json.loads(default_baseline_path().read_text())
    assert base["n_questions"] >= 10
    assert all(0.0 <= v <= 1.0 for v in base["metrics"].values())


@pytest.mark.slow
def test_fast_subset_does_not_regress(corpus_dir: Path, settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_gate(settings, corpus_dir, tmp_path / "gate", default_baseline_path())
    m = result["metrics"]
    assert m["passed"], "\n".join(m["lines"])
