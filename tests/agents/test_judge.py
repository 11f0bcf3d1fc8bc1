"""The judge rule (ADR 0003): weights, contested claims, thresholds, conviction."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import date, timedelta

import pytest

from equimind.core.research import Rating, Speaker
from equimind.debate import judge as rule
from equimind.debate.records import ClaimKind, DraftClaim, SpanRef, Theme

AS_OF = date(2025, 9, 1)


def claim(cid: str, side: Speaker, strength: float, theme: Theme = Theme.GROWTH, doc: str = "d1",
          when: date | None = AS_OF, kind: ClaimKind = ClaimKind.OPENING, rebuts: str | None = None) -> DraftClaim:
    return DraftClaim(id=cid, speaker=side, text=f"claim {cid}", theme=theme, strength=strength, signal="t",
                      spans=(SpanRef(doc, 0, 5, "quote"),), kind=kind, rebuts=rebuts, evidence_date=when)


def test_recency_halves_each_year_with_a_floor() -> None:
    assert rule.recency(AS_OF, AS_OF) == 1.0
    assert rule.recency(AS_OF - timedelta(days=365), AS_OF) == pytest.approx(0.5)
    assert rule.recency(AS_OF - timedelta(days=5000), AS_OF) == rule.RECENCY_FLOOR
    assert rule.recency(None, AS_OF) == rule.RECENCY_FLOOR


def test_balanced_evidence_is_hold() -> None:
    v = rule.judge([claim("a", Speaker.BULL, 0.5, Theme.GROWTH), claim("b", Speaker.BEAR, 0.5, Theme.REGULATION)],
                   AS_OF)
    assert v.rating is Rating.HOLD and v.score == 0.0 and v.winning_side is None
    assert v.thesis.startswith("Evidence is balanced")


def test_one_sided_evidence_needs_breadth_for_strong() -> None:
    narrow = [claim(f"b{i}", Speaker.BULL, 0.6, Theme.GROWTH) for i in range(4)]
    assert rule.judge(narrow, AS_OF).rating is Rating.BUY  # S = 1 but one theme only
    broad = [*narrow[:2], claim("m1", Speaker.BULL, 0.6, Theme.MOMENTUM),
             claim("m2", Speaker.BULL, 0.6, Theme.MOMENTUM)]
    v = rule.judge(broad, AS_OF)
    assert v.rating is Rating.STRONG_BUY and v.winning_side is Speaker.BULL
    bears = [claim(f"r{i}", Speaker.BEAR, 0.6, t) for i, t in enumerate([Theme.LEGAL, Theme.LEGAL, Theme.SUPPLY,
                                                                           Theme.VALUATION])]
    assert rule.judge(bears, AS_OF).rating is Rating.STRONG_SELL


def test_score_thresholds() -> None:
    # B = 0.7, R = 0.5 on different themes: S = 0.2/1.2 = 0.167 -> BUY
    v = rule.judge([claim("a", Speaker.BULL, 0.7, Theme.GROWTH), claim("b", Speaker.BEAR, 0.5, Theme.LEGAL)], AS_OF)
    assert v.score == pytest.approx(0.1667, abs=1e-4) and v.rating is Rating.BUY
    v = rule.judge([claim("a", Speaker.BULL, 0.6, Theme.GROWTH), claim("b", Speaker.BEAR, 0.5, Theme.LEGAL)], AS_OF)
    assert v.rating is Rating.HOLD  # S = 0.091


def test_contested_claims_weigh_half() -> None:
    strong_bear = claim("r", Speaker.BEAR, 0.7, Theme.GROWTH)
    weak_bull = claim("b", Speaker.BULL, 0.5, Theme.GROWTH)
    other_bull = claim("c", Speaker.BULL, 0.5, Theme.DEMAND)
    v = rule.judge([strong_bear, weak_bull, other_bull], AS_OF)
    w = {x.claim.id: x for x in v.weighted}
    assert w["b"].contested_by == "r" and w["b"].weight == pytest.approx(0.25)
    assert w["r"].contested_by is None and w["c"].contested_by is None
    assert any(line.startswith("Contradiction on growth") for line in v.reasoning)


def test_agreement_counts_independent_sources() -> None:
    v = rule.judge([claim("a", Speaker.BULL, 0.4, doc="d1"), claim("b", Speaker.BULL, 0.4, doc="d2"),
                    claim("c", Speaker.BULL, 0.4, doc="d2")], AS_OF)
    assert {x.agreement for x in v.weighted} == {1.25}


def test_rebuttals_carry_no_weight() -> None:
    base = [claim("a", Speaker.BULL, 0.6), claim("b", Speaker.BEAR, 0.4, Theme.LEGAL)]
    with_rebuttal = [*base, claim("x", Speaker.BEAR, 0.9, Theme.GROWTH, kind=ClaimKind.REBUTTAL, rebuts="a")]
    assert rule.judge(base, AS_OF).score == rule.judge(with_rebuttal, AS_OF).score


def test_conviction_grows_with_evidence_and_margin() -> None:
    few = rule.judge([claim("a", Speaker.BULL, 0.5)], AS_OF)
    many = rule.judge([claim(str(i), Speaker.BULL, 0.5, doc=f"d{i}") for i in range(8)], AS_OF)
    assert 0 < few.conviction < many.conviction <= 1
    assert rule.conviction(Rating.BUY, 0.9, 5.0) > rule.conviction(Rating.BUY, 0.2, 5.0)


def test_old_evidence_weighs_less() -> None:
    old = rule.judge([claim("a", Speaker.BULL, 0.5, when=AS_OF - timedelta(days=730)),
                      claim("b", Speaker.BEAR, 0.5, Theme.LEGAL)], AS_OF)
    assert old.rating is Rating.SELL  # B = 0.125, R = 0.5


def test_no_claims_is_an_error_not_a_guess() -> None:
    with pytest.raises(ValueError, match="refuse"):
        rule.judge([], AS_OF)


def _fingerprint_in_a_fresh_interpreter(hash_seed: str) -> str:
    """The fingerprint computed by a new Python process: fresh module objects, another string-hash seed (a table
    hashed in set or dict-iteration order would come out different)."""
    code = f"from {rule.__name__} import rules_fingerprint; print(rules_fingerprint())"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                         check=True)
    return out.stdout.strip()


def test_fingerprint_is_stable_hex() -> None:
    fp = rule.rules_fingerprint()
    assert re.fullmatch(r"[0-9a-f]{64}", fp)
    assert _fingerprint_in_a_fresh_interpreter("1") == fp == _fingerprint_in_a_fresh_interpreter("2")


def test_fingerprint_changes_with_a_judge_constant_or_a_rule_table(monkeypatch: pytest.MonkeyPatch) -> None:
    fp = rule.rules_fingerprint()
    with monkeypatch.context() as m:
        m.setattr(rule, "BUY", rule.BUY + 0.01)  # a judge threshold
        assert rule.rules_fingerprint() != fp
    with monkeypatch.context() as m:
        m.setitem(rule.FIGURE_ALIASES, "test_only_alias", "revenue")  # a rule table of the offline analyst
        assert rule.rules_fingerprint() != fp
    assert rule.rules_fingerprint() == fp  # both restored: the same inputs give the same fingerprint
