"""Leave-company-out selection over synthetic judged rows: a value that helps one company only is not credited to
the held company, a value that helps everywhere is chosen in every fold, ties keep the default."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from equimind.core import tunables
from equimind.core.tunables import Tunable, register, tuned
from equimind.evaluation.lco import FINANCEBENCH, GOLDEN, Row, asker, chosen_tunables, leave_company_out
from equimind.evaluation.report_lco import lco_lines
from equimind.evaluation.report_md import render_markdown

COMPANIES = ("A", "B", "C", "D")
PER = 5  # questions per company


def _rows(bearing: Mapping[str, int]) -> list[Row]:
    """FinanceBench-like rows: the first ``bearing[c]`` questions of company c are answer-bearing."""
    return [{"id": f"{c}{i}", "company": c, "type": "metrics-generated", "computed": i % 2 == 0,
             "refused": i >= bearing[c], "on_gold_page": i < bearing[c], "numbers_found": False}
            for c in COMPANIES for i in range(PER)]


BASE = {"A": 1, "B": 3, "C": 3, "D": 3}


class Fake:
    """An answer path whose answer-bearing count per company depends on the overrides; counts its runs."""

    def __init__(self, effect: Mapping[str, Mapping[Any, Mapping[str, int]]]) -> None:
        self.effect = effect  # tunable -> value -> company -> change in answer-bearing questions
        self.calls: list[dict[str, Any]] = []

    def __call__(self, values: Mapping[str, Any]) -> list[Row]:
        self.calls.append(dict(values))
        counts = dict(BASE)
        for name, value in values.items():
            for c, d in self.effect.get(name, {}).get(value, {}).items():
                counts[c] = max(0, min(PER, counts[c] + d))
        return _rows(counts)


def test_a_value_that_helps_one_company_only_is_not_credited_when_that_company_is_held() -> None:
    t = Tunable("t.one", 0, (0, 1), "helps A a lot, costs every other company one question")
    fake = Fake({"t.one": {1: {"A": 4, "B": -1, "C": -1, "D": -1}}})
    block = leave_company_out(FINANCEBENCH, [t], fake)
    assert block["tuned_on_all_values"] == {"t.one": 1}  # on all dev the value looks like a gain ...
    assert block["tuned_on_all_score"] > block["dev_score"]
    assert block["lco_score"] < block["tuned_on_all_score"]  # ... leave-company-out it is not
    assert block["lco_score"] < block["dev_score"]
    folds = {f["company"]: f for f in block["folds"]}
    assert folds["A"]["chosen"] == {"t.one": 0}  # without A's questions nothing favours the value
    assert all(folds[c]["chosen"] == {"t.one": 1} for c in "BCD")
    assert block["lco"]["all"]["answer_bearing"]["k"] == 1 + 3 * 2
    assert len(fake.calls) == 1 + 1  # the defaults and the one other candidate, each answered once


def test_a_value_that_helps_everywhere_is_chosen_in_every_fold() -> None:
    t = Tunable("t.all", 0.5, (0.34, 0.5, 0.67), "helps every company")
    fake = Fake({"t.all": {0.67: {c: 1 for c in COMPANIES}, 0.34: {"B": -1}}})
    block = leave_company_out(FINANCEBENCH, [t], fake)
    assert all(f["chosen"] == {"t.all": 0.67} for f in block["folds"])
    assert block["lco_score"] == block["tuned_on_all_score"] > block["dev_score"]
    assert "4 of 4 folds" in block["note"]
    assert [c["score"] for c in block["sweep"]["t.all"]] == [0.45, 0.5, 0.7]


def test_defaults_win_ties_and_then_the_estimate_is_the_dev_figure() -> None:
    t = Tunable("t.flat", 0, (0, 1), "changes nothing")
    block = leave_company_out(FINANCEBENCH, [t], Fake({}))
    assert all(not f["changed"] for f in block["folds"])
    assert block["lco"] == block["dev"] and block["lco_score"] == block["dev_score"]
    assert "equals the dev figure" in block["note"]
    none = leave_company_out(FINANCEBENCH, [], Fake({}))
    assert none["lco"] == none["dev"] and "no tunables" in none["note"]


def test_folds_choosing_several_values_are_answered_under_that_combination() -> None:
    a = Tunable("t.a", 0, (0, 1), "a")
    b = Tunable("t.b", 0, (0, 1), "b")
    fake = Fake({"t.a": {1: {c: 1 for c in COMPANIES}}, "t.b": {1: {c: 1 for c in COMPANIES}}})
    block = leave_company_out(FINANCEBENCH, [a, b], fake)
    assert {"t.a": 1, "t.b": 1} in fake.calls
    assert len(fake.calls) == 4  # defaults, a=1, b=1, both: the combination once for every fold
    assert block["lco"]["all"]["answer_bearing"]["k"] == sum(BASE.values()) + 2 * len(COMPANIES)


def test_golden_score_is_correct_share_minus_false_refusals() -> None:
    rows = [{"id": "g1", "company": "X", "type": "factual", "verdict": "correct"},
            {"id": "g2", "company": "X", "type": "factual", "verdict": "refused"},
            {"id": "g3", "company": "Y", "type": "absent", "verdict": "correct"},
            {"id": "g4", "company": "Y", "type": "factual", "verdict": "wrong"}]
    block = leave_company_out(GOLDEN, [], lambda values: rows)
    assert block["dev_score"] == pytest.approx((2 - 1) / 4)
    assert block["dev"]["answerable"]["false_refusal"]["k"] == 1
    assert block["dev"]["type:absent"]["correct"]["k"] == 1


def test_end_to_end_through_overrides_and_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer path reads the value with ``tuned`` while the harness overrides it; the block renders."""
    monkeypatch.setattr(tunables, "_REGISTRY", {})
    monkeypatch.setattr(tunables, "_DEFAULTS", {})
    register(Tunable("t.threshold", 3, (1, 3), "answer-bearing questions per company when lowered"))

    def answer() -> list[Row]:
        n = tuned("t.threshold")
        return [{k: v for k, v in r.items() if k != "company"} for r in _rows({c: 4 if n == 1 else 2
                                                                                for c in COMPANIES})]

    company = {f"{c}{i}": c for c in COMPANIES for i in range(PER)}
    tuned_list = chosen_tunables([])
    block = leave_company_out(FINANCEBENCH, tuned_list, asker(answer, company))
    assert [f["chosen"] for f in block["folds"]] == [{"t.threshold": 1}] * 4
    assert block["lco"]["all"]["answer_bearing"]["k"] == 16 and block["dev"]["all"]["answer_bearing"]["k"] == 8
    assert tuned("t.threshold") == 3  # the harness's overrides are gone
    text = "\n".join(lco_lines(json.loads(json.dumps({"tunables": ["t.threshold"],
                                                      "parts": {"financebench": block}}))))
    assert "| all | answer_bearing | 20 | 0.400" in text and "t.threshold = 1" in text
    with pytest.raises(tunables.UnknownTunable):
        chosen_tunables(["t.nope"])


def test_the_evaluation_document_shows_the_estimate_of_its_result_file(tmp_path: Path) -> None:
    t = Tunable("t.all", 0, (0, 1), "helps every company")
    block = leave_company_out(FINANCEBENCH, [t], Fake({"t.all": {1: {c: 1 for c in COMPANIES}}}))
    env = {"metrics": {"leave_company_out": {"tunables": ["t.all"], "parts": {"financebench": block}}}}
    (tmp_path / "eval_answers_lco.json").write_text(json.dumps(env), encoding="utf-8")
    text = render_markdown(tmp_path)
    assert "## Leave-company-out estimate" in text and "--leave-company-out" in text
    assert "| A | 5 | t.all = 1 | 0.200 | 0.400 |" in text
