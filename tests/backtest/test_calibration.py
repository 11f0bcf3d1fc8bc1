"""Calibration of conviction (issue 31): hit rate per conviction bucket and rating with Wilson intervals, Brier score
against no-skill baselines, a monotone map fitted on earlier decisions and scored on later ones, and a verdict that
says when the sample is too small."""

from __future__ import annotations

import math
from datetime import date, timedelta

import pytest

from equimind.backtest.calibration import brier, calibration_at, fit_monotone, scored, wilson
from equimind.backtest.stats import Decision
from equimind.core.research import Rating


def decision(i: int, conviction: float, right: bool, rating: Rating = Rating.BUY, day: date | None = None) -> Decision:
    side = 1 if rating in (Rating.BUY, Rating.STRONG_BUY) else -1
    ret = 0.05 * side if right else -0.05 * side
    return Decision(f"T{i % 7}", day or date(2024, 1, 1) + timedelta(days=i), rating, conviction, 100.0, {3: ret})


def wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_wilson_interval_matches_the_formula() -> None:
    for k, n in ((7, 10), (0, 5), (30, 30), (12, 40)):
        got = wilson(k, n)
        assert got is not None and got == pytest.approx(wilson_by_hand(k, n), abs=1e-9)
    assert wilson(0, 0) is None


def test_buckets_ratings_and_brier_on_a_hand_checked_sample() -> None:
    ds = [decision(0, 0.3, False), decision(1, 0.3, True), decision(2, 0.7, True), decision(3, 0.7, True),
          decision(4, 0.9, True, Rating.STRONG_SELL), decision(5, 0.5, False, Rating.SELL),
          decision(6, 0.5, True, Rating.HOLD)]  # HOLD: not directional, left out
    block = calibration_at(ds, 3)
    assert block["n"] == 6
    by = {c["label"]: c for c in block["buckets"]}
    assert (by["0.0-0.4"]["n"], by["0.0-0.4"]["hits"]) == (2, 1)
    assert (by["0.6-0.8"]["n"], by["0.6-0.8"]["hits"]) == (2, 2) and by["0.8-1.0"]["hits"] == 1
    levels = {c["label"]: (c["n"], c["hits"]) for c in block["by_rating"]}
    assert levels == {"BUY": (4, 3), "SELL": (1, 0), "STRONG_SELL": (1, 1)}
    hits = [0, 1, 1, 1, 1, 0]
    conv = [0.3, 0.3, 0.7, 0.7, 0.9, 0.5]
    want = sum((0.5 + 0.5 * c - y) ** 2 for c, y in zip(conv, hits, strict=True)) / 6
    assert block["brier"] == pytest.approx(want)
    assert block["brier_literal"] == pytest.approx(sum((c - y) ** 2 for c, y in zip(conv, hits, strict=True)) / 6)
    p = 4 / 6
    assert block["brier_climatology"] == pytest.approx(p * (1 - p))
    assert block["brier_skill"] == pytest.approx(1 - want / (p * (1 - p)))
    assert "fewer than 30" in block["verdict"] and "too small" in block["verdict"]


def test_unknown_outcomes_are_not_scored_and_an_empty_horizon_says_so() -> None:
    pending = Decision("X", date(2025, 1, 1), Rating.BUY, 0.8, 10.0, {3: None})
    assert scored([pending], 3) == [] and brier([], []) is None
    block = calibration_at([pending], 3)
    assert block["n"] == 0 and block["verdict"].startswith("n=0")


def _skewed(n_per_day: int, days: int) -> list[Decision]:
    """Conviction says the opposite of what happens: high conviction is right 20% of the time, low 80%."""
    out = []
    for d in range(days):
        for j in range(n_per_day):
            i = d * n_per_day + j
            high = j % 2 == 0
            right = (j % 10 < 2) if high else (j % 10 < 8 or j % 10 == 9)
            out.append(decision(i, 0.9 if high else 0.3, right, day=date(2024, 1, 1) + timedelta(days=30 * d)))
    return out


def test_a_monotone_map_is_fitted_early_scored_late_and_adopted_only_with_enough_decisions() -> None:
    big = fit_monotone(scored(_skewed(20, 4), 3))  # 40 decisions to fit, 40 to score
    assert big.n_fit == 40 and big.n_eval == 40
    assert big.brier_eval_mapped is not None and big.brier_eval_raw is not None
    assert big.brier_eval_mapped < big.brier_eval_raw and big.adopt and "lowers" in big.reason
    small = fit_monotone(scored(_skewed(4, 4), 3))
    assert not small.adopt and "at least 30" in small.reason
    one_day = fit_monotone(scored(_skewed(5, 1), 3))
    assert not one_day.adopt and one_day.split_day is None


def test_a_calibrated_sample_reads_as_rising() -> None:
    """Each bucket right exactly as often as its conviction states (0.5 + 0.5 x c of 20 decisions)."""
    ds = []
    for b, conv in enumerate((0.1, 0.5, 0.7, 0.9)):
        right = round(20 * (0.5 + 0.5 * conv))
        ds += [decision(20 * b + j, conv, j < right) for j in range(20)]
    block = calibration_at(ds, 3)
    rates = [c["rate"] for c in block["buckets"] if c["n"]]
    assert rates == sorted(rates) and "hit rate rises with conviction" in block["verdict"]
    assert block["brier_skill"] > 0 and block["brier"] < block["brier_literal"]


def test_the_report_draws_and_tabulates_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from equimind.backtest.calibration import calibration
    from equimind.backtest.models import BacktestReport, BacktestRequest
    from equimind.backtest.plot import calibration_lines, calibration_rows, markdown_report, plot_reliability

    ds = _skewed(10, 2)
    req = BacktestRequest(tickers=["T0"], start=date(2024, 1, 1), end=date(2024, 3, 1), horizons=[3])
    report = BacktestReport(run_id="r1", created_at="now", request=req, snapshot="s", data_end=date(2025, 1, 1),
                            schedule=[], n_decisions=len(ds), n_rated=len(ds), n_refused=0, decisions=[], table=[],
                            statistics={}, equity_curve=[], caveats=[], calibration=calibration(ds, [3]))
    png = plot_reliability(report, tmp_path / "rel.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    report.calibration_plot_path = str(png)
    rows = calibration_rows(report)
    assert any(r[1] == "conviction 0.8-1.0" and r[2] == "10" for r in rows)
    assert "Brier" in calibration_lines(report)[0]
    md = markdown_report(report)
    assert "## Calibration" in md and "rel.png" in md
