"""The CI regression gate: noise floor of one question, the gated metric set, the rule that a baseline value goes
down only with a decision record, and (slow) the real fast subset against the baseline."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from equimind.evaluation.regression import (
    baseline_problems,
    compare_to_baseline,
    default_baseline_path,
    gated_keys,
    run_gate,
    updated_baseline,
)

REPO = Path(__file__).resolve().parents[2]
BASELINE_IN_REPO = "equimind/evaluation/data/baseline_ci.json"
# The gated metrics, written out: removing one from the gate (or from the baseline file) fails this test.
GATED = frozenset({
    "dense/recall_any@10", "dense/mrr@10", "dense/ndcg@10",
    "bm25/recall_any@10", "bm25/mrr@10", "bm25/ndcg@10",
    "hybrid/recall_any@10", "hybrid/mrr@10", "hybrid/ndcg@10",
})
ADR_0011 = "docs/decisions/0011-statement-captions-and-concept-words.md"


def _baseline() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(default_baseline_path().read_text())
    return data


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


def test_a_metric_deleted_from_the_baseline_still_fails_the_gate() -> None:
    ok, lines = compare_to_baseline({"dense/mrr@10": 0.9, "bm25/mrr@10": 0.3}, 10, {"dense/mrr@10": 0.5})
    assert not ok
    assert any(line.startswith("FAIL bm25/mrr@10: measured but missing from the baseline") for line in lines)


def test_the_gated_metric_set_is_pinned() -> None:
    assert gated_keys() == GATED
    base = _baseline()
    assert set(base["metrics"]) == GATED
    assert all(set(entry["metrics"]) == GATED for entry in base["history"])


def test_committed_baseline_is_well_formed() -> None:
    base = _baseline()
    assert base["n_questions"] >= 10
    assert all(0.0 <= v <= 1.0 for v in base["metrics"].values())


def test_committed_baseline_lowers_nothing_without_a_decision_record() -> None:
    base = _baseline()
    assert baseline_problems(base, REPO) == []
    assert base["history"][-1]["metrics"] == base["metrics"]
    # the one lowering so far: d3b2987 (embedding text cells-v3), dense MRR 0.6158 -> 0.5386, argued in ADR 0011
    d3b = next(e for e in base["history"] if e.get("commit") == "d3b2987")
    assert d3b["lowered_by"]["dense/mrr@10"] == ADR_0011 and (REPO / ADR_0011).is_file()


def _two_entries(lowered_by: dict[str, Any] | None) -> dict[str, Any]:
    before = dict.fromkeys(GATED, 0.6)
    after = {**before, "dense/mrr@10": 0.5}
    entry: dict[str, Any] = {"metrics": after, "n_questions": 19, "setting": "x/shared"}
    if lowered_by is not None:
        entry["lowered_by"] = lowered_by
    return {"metrics": after, "n_questions": 19, "setting": "x/shared",
            "history": [{"metrics": before, "n_questions": 19, "setting": "x/shared"}, entry]}


def test_a_lowered_value_needs_an_existing_decision_record() -> None:
    assert baseline_problems(_two_entries({"dense/mrr@10": ADR_0011}), REPO) == []
    for lowered_by, says in [(None, "without a decision record"),
                             ({"dense/mrr@10": None}, "without a decision record"),
                             ({"dense/mrr@10": "because it looked better"}, "without a decision record"),
                             ({"dense/mrr@10": "docs/decisions/9999-no-such-record.md"}, "does not exist"),
                             ({"dense/mrr@10": ADR_0011, "bm25/mrr@10": ADR_0011}, "did not go down")]:
        problems = baseline_problems(_two_entries(lowered_by), REPO)
        assert len(problems) == 1 and says in problems[0], (lowered_by, problems)


def test_a_baseline_edited_in_place_or_a_deleted_metric_is_caught() -> None:
    base = _baseline()
    lowered = copy.deepcopy(base)
    lowered["metrics"]["hybrid/recall_any@10"] -= 0.1  # lowered without a history entry
    assert any("history[-1].metrics differs" in p for p in baseline_problems(lowered, REPO))
    lowered["history"][-1]["metrics"]["hybrid/recall_any@10"] -= 0.1  # ... and in the last entry
    assert any("history[3]: hybrid/recall_any@10 went down" in p for p in baseline_problems(lowered, REPO))
    for entry in lowered["history"][:-1]:  # a whole history rewritten is consistent in itself: git catches it
        entry["metrics"]["hybrid/recall_any@10"] = min(entry["metrics"]["hybrid/recall_any@10"], 0.7947)
    assert baseline_problems(lowered, REPO) == []
    deleted = copy.deepcopy(base)
    del deleted["metrics"]["bm25/ndcg@10"]
    del deleted["history"][-1]["metrics"]["bm25/ndcg@10"]
    problems = baseline_problems(deleted, REPO)
    last = len(deleted["history"]) - 1
    assert any("missing ['bm25/ndcg@10']" in p for p in problems)
    assert f"history[{last}]: its metrics are not the gated set {sorted(GATED)}" in problems


def test_update_appends_to_the_history_and_leaves_a_lowering_to_be_named() -> None:
    base = _baseline()
    measured = {**base["metrics"], "hybrid/mrr@10": base["metrics"]["hybrid/mrr@10"] - 0.05,
                "bm25/mrr@10": base["metrics"]["bm25/mrr@10"] + 0.05}
    new, lowered = updated_baseline(base, measured, base["n_questions"])
    assert lowered == ["hybrid/mrr@10"]
    assert new["history"][:-1] == base["history"] and new["history"][-1]["metrics"] == measured == new["metrics"]
    problems = baseline_problems(new, REPO)
    assert len(problems) == 1 and "hybrid/mrr@10 went down" in problems[0]
    new["history"][-1]["lowered_by"]["hybrid/mrr@10"] = ADR_0011
    assert baseline_problems(new, REPO) == []


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout


def test_the_baseline_history_agrees_with_git() -> None:
    """The history is append-only and true: every committed version of the file is an entry of it (its metrics,
    setting and size), and a committed history is a prefix of the current one. So a value cannot be lowered by
    editing it, and the entry before it, in place: the earlier commit still holds what they were."""
    if shutil.which("git") is None or _git_ok() is False:
        pytest.skip("not a git checkout (or no git): the baseline's history cannot be compared with git's")
    history = _baseline()["history"]
    commits = _git("log", "--format=%H", "--", BASELINE_IN_REPO).split()
    assert commits, f"git has no commit of {BASELINE_IN_REPO}"
    entries = [(e["metrics"], e["setting"], e["n_questions"]) for e in history]
    for commit in commits:
        committed = json.loads(_git("show", f"{commit}:{BASELINE_IN_REPO}"))
        assert (committed["metrics"], committed["setting"], committed["n_questions"]) in entries, \
            f"the baseline committed in {commit[:7]} is not in the file's history"
        if "history" in committed:
            assert history[:len(committed["history"])] == committed["history"], \
                f"the history committed in {commit[:7]} was rewritten; append to it instead"


def _git_ok() -> bool:
    return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--git-dir"], capture_output=True,
                          check=False).returncode == 0


@pytest.mark.slow
def test_fast_subset_does_not_regress(corpus_dir: Path, settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_gate(settings, corpus_dir, tmp_path / "gate", default_baseline_path())
    m = result["metrics"]
    assert m["passed"], "\n".join(m["lines"])
