"""Backtest statistics: hand-computed hit rate, IC sign, long-short maths, forward returns that never look ahead."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from equimind.backtest.stats import (
    Decision,
    add_months,
    forward_return,
    forward_returns,
    hit_rate,
    information_coefficient,
    long_short,
    long_short_periods,
    rating_score,
    rating_side,
    sample_caveat,
    spearman_rows,
    summarise_backtest,
    windows_overlap,
)
from equimind.core.research import Rating
from equimind.evaluation.metrics import BootstrapCI
from equimind.evaluation.report import dumps

R = Rating
D0 = date(2024, 1, 2)


def dec(
    rating: Rating,
    ret: float | None,
    *,
    bench: float | None = None,
    day: date = D0,
    ticker: str = "T",
    conviction: float = 0.5,
    horizon: int = 1,
) -> Decision:
    return Decision(ticker, day, rating, conviction, 100.0, {horizon: ret}, {horizon: bench})


# ------------------------------------------------------------------------------------------------------- scores


def test_rating_scores_and_sides() -> None:
    assert [rating_score(r) for r in (R.STRONG_SELL, R.SELL, R.HOLD, R.BUY, R.STRONG_BUY)] == [-2, -1, 0, 1, 2]
    assert rating_score(R.STRONG_BUY, 0.25) == 0.5
    assert rating_score(R.SELL, 0.8) == pytest.approx(-0.8)
    assert [rating_side(r) for r in (R.STRONG_SELL, R.SELL, R.HOLD, R.BUY, R.STRONG_BUY)] == [-1, -1, 0, 1, 1]


def test_decision_validates_and_copies_its_returns() -> None:
    with pytest.raises(ValueError, match="conviction"):
        Decision("T", D0, R.BUY, 1.5, 100.0)
    with pytest.raises(ValueError, match="close"):
        Decision("T", D0, R.BUY, 0.5, 0.0)
    fwd: dict[int, float | None] = {1: 0.1}
    d = Decision("T", D0, R.BUY, 0.5, 100.0, fwd, {1: 0.04})
    fwd[1] = -0.9
    assert d.outcome(1) == 0.1
    assert d.outcome(1, vs_benchmark=True) == pytest.approx(0.06)
    assert d.outcome(3) is None
    assert Decision("T", D0, R.BUY, 0.5, 100.0, {1: 0.1}).outcome(1, vs_benchmark=True) is None  # no benchmark


# ------------------------------------------------------------------------------------------------------- hit rate


def test_hit_rate_hand_computed() -> None:
    decisions = [
        dec(R.BUY, 0.05),  # hit
        dec(R.STRONG_BUY, -0.02),  # miss
        dec(R.SELL, -0.03),  # hit
        dec(R.STRONG_SELL, 0.01),  # miss
        dec(R.SELL, 0.0),  # miss: a flat outcome is not a correct call
        dec(R.HOLD, 0.04),  # excluded
        dec(R.BUY, None),  # outcome not known yet
    ]
    hr = hit_rate(decisions, 1, n_resamples=2000)
    assert (hr.n, hr.hits, hr.n_hold_excluded, hr.n_missing) == (5, 2, 1, 1)
    assert hr.rate == pytest.approx(0.4)
    assert hr.base_rate_up == pytest.approx(3 / 6)  # 0.05, 0.01, 0.04 of six known outcomes
    assert hr.ci is not None and hr.ci.low <= 0.4 <= hr.ci.high
    assert "n=5 directional decisions" in hr.caveat
    assert "cannot distinguish skill from luck" in hr.caveat


def test_hit_rate_vs_benchmark_uses_excess_return() -> None:
    decisions = [
        dec(R.BUY, 0.05, bench=0.08),  # rose, but less than the market: excess -3% -> miss
        dec(R.SELL, 0.02, bench=0.06),  # rose, but lagged the market: excess -4% -> hit
        dec(R.BUY, 0.05, bench=None),  # benchmark unknown: missing in the excess variant
    ]
    raw = hit_rate(decisions, 1, n_resamples=500)
    excess = hit_rate(decisions, 1, vs_benchmark=True, n_resamples=500)
    assert (raw.n, raw.hits) == (3, 2)
    assert (excess.n, excess.hits, excess.n_missing) == (2, 1, 1)
    assert excess.vs_benchmark


def test_hit_rate_with_no_known_outcome() -> None:
    hr = hit_rate([dec(R.BUY, None), dec(R.HOLD, 0.1)], 1)
    assert hr.n == 0 and hr.rate is None and hr.ci is None
    assert hr.caveat.startswith("n=0")


# ------------------------------------------------------------------------------------------------------- IC


def test_ic_sign_on_constructed_examples() -> None:
    ratings = [R.STRONG_SELL, R.SELL, R.HOLD, R.BUY, R.STRONG_BUY]
    good = [dec(r, ret) for r, ret in zip(ratings, [-0.10, -0.02, 0.00, 0.03, 0.12], strict=True)]
    bad = [dec(r, ret) for r, ret in zip(ratings, [0.12, 0.03, 0.00, -0.02, -0.10], strict=True)]
    assert information_coefficient(good, 1, n_resamples=500).ic == pytest.approx(1.0)
    assert information_coefficient(bad, 1, n_resamples=500).ic == pytest.approx(-1.0)


def test_ic_matches_scipy_and_conviction_changes_the_ranking() -> None:
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    ratings = list(R)
    decisions = [
        dec(ratings[i % 5], float(r), conviction=float(c))
        for i, (r, c) in enumerate(zip(rng.normal(size=40), rng.uniform(size=40), strict=True))
    ]
    scores = [rating_score(d.rating) for d in decisions]
    returns = [d.outcome(1) for d in decisions]
    ic = information_coefficient(decisions, 1, n_resamples=1000)
    assert ic.ic == pytest.approx(spearmanr(scores, returns).statistic)
    assert ic.n == 40 and ic.ci is not None and ic.ci.contains(0.0)  # pure noise
    weighted = information_coefficient(decisions, 1, use_conviction=True, n_resamples=1000)
    scores_c = [rating_score(d.rating, d.conviction) for d in decisions]
    assert weighted.ic == pytest.approx(spearmanr(scores_c, returns).statistic)
    assert weighted.ic != pytest.approx(ic.ic)


def test_ic_undefined_for_tiny_or_constant_samples() -> None:
    two = information_coefficient([dec(R.BUY, 0.1), dec(R.SELL, -0.1)], 1)
    same_rating = information_coefficient([dec(R.BUY, x) for x in (0.1, 0.2, -0.1)], 1)
    for res in (two, same_rating):
        assert res.ic is None and res.ci is None and res.p_value is None
        assert "undefined" in res.caveat


def test_spearman_rows_matches_scipy_with_ties() -> None:
    from scipy.stats import spearmanr

    rng = np.random.default_rng(1)
    x = rng.integers(-2, 3, size=(6, 25)).astype(float)
    y = rng.normal(size=(6, 25))
    got = spearman_rows(x, y)
    for row in range(6):
        assert got[row] == pytest.approx(spearmanr(x[row], y[row]).statistic)
    assert np.isnan(spearman_rows(np.ones((1, 5)), y[:1, :5]))[0]


def test_ic_bootstrap_excludes_zero_for_a_strong_signal() -> None:
    rng = np.random.default_rng(2)
    ratings = list(R)
    decisions = []
    for i in range(200):
        r = ratings[i % 5]
        decisions.append(dec(r, 0.02 * rating_score(r) + float(rng.normal(scale=0.02))))
    ic = information_coefficient(decisions, 1, n_resamples=2000)
    assert ic.ic is not None and ic.ic > 0.5
    assert ic.ci is not None and ic.ci.low > 0
    assert "excludes 0" in ic.caveat


# ------------------------------------------------------------------------------------------------------- long-short


def _ls_decisions() -> list[Decision]:
    d1, d2, d3, d4 = date(2024, 1, 2), date(2024, 2, 1), date(2024, 3, 1), date(2024, 4, 1)
    return [
        dec(R.BUY, 0.10, day=d1, ticker="A"),
        dec(R.STRONG_BUY, 0.04, day=d1, ticker="B"),
        dec(R.SELL, -0.02, day=d1, ticker="C"),
        dec(R.HOLD, 0.50, day=d1, ticker="D"),  # flat: ignored by the portfolio
        dec(R.BUY, 0.03, day=d2, ticker="A"),  # long-only date
        dec(R.STRONG_SELL, 0.05, day=d3, ticker="C"),  # short-only date: lost 5%
        dec(R.BUY, None, day=d4, ticker="A"),  # unknown outcome: date dropped
    ]


def test_long_short_periods_hand_computed() -> None:
    periods = long_short_periods(_ls_decisions(), 1)
    assert [p.decided_at for p in periods] == [date(2024, 1, 2), date(2024, 2, 1), date(2024, 3, 1)]
    p1, p2, p3 = periods
    assert (p1.n_long, p1.n_short) == (2, 1)
    assert p1.long_return == pytest.approx(0.07) and p1.short_return == pytest.approx(-0.02)
    assert p1.spread == pytest.approx(0.09)  # long 7% - short(-2%)
    assert p2.spread == pytest.approx(0.03) and p2.short_return is None
    assert p3.spread == pytest.approx(-0.05) and p3.long_return is None


def test_long_short_summary_and_strict_variant() -> None:
    ls = long_short(_ls_decisions(), 1, n_resamples=2000)
    assert ls.n_dates == 3 and ls.n_dates_one_sided == 2
    assert ls.mean_spread == pytest.approx((0.09 + 0.03 - 0.05) / 3)
    assert ls.ci is not None and ls.ci.estimate == ls.mean_spread and ls.ci.contains(ls.ci.estimate)
    strict = long_short(_ls_decisions(), 1, require_both_sides=True, n_resamples=500)
    assert [p.spread for p in strict.periods] == pytest.approx([0.09, 0.0, 0.0])


def test_hold_only_date_is_flat() -> None:
    (p,) = long_short_periods([dec(R.HOLD, 0.2)], 1)
    assert p.spread == 0.0 and (p.n_long, p.n_short) == (0, 0)


# ------------------------------------------------------------------------------------------------------- caveats


def test_caveat_for_a_wide_interval_on_thirty_decisions() -> None:
    ci = BootstrapCI(estimate=0.05, low=-0.12, high=0.22, alpha=0.05, n=30, n_resamples=10_000)
    text = sample_caveat(30, ci, "decisions", 0.0, "0")
    assert text.startswith("n=30 decisions: the 95% CI [-0.120, 0.220] includes 0")
    assert "cannot distinguish skill from luck" in text
    assert "fewer than 30" not in text


def test_caveat_flags_small_samples_and_overlapping_windows() -> None:
    ci = BootstrapCI(estimate=0.3, low=0.1, high=0.5, alpha=0.05, n=12, n_resamples=10_000)
    text = sample_caveat(12, ci, "decisions", 0.0, "0", overlapping=True)
    assert "excludes 0" in text and "fewer than 30" in text and "overlap" in text


def test_windows_overlap() -> None:
    monthly = [dec(R.BUY, 0.1, day=date(2024, m, 1)) for m in (1, 2, 3)]
    assert windows_overlap(monthly, 3)
    assert not windows_overlap(monthly, 1)  # exactly one month apart: back to back, no overlap
    other_tickers = [dec(R.BUY, 0.1, day=date(2024, m, 1), ticker=f"T{m}") for m in (1, 2, 3)]
    assert not windows_overlap(other_tickers, 3)


def test_summary_is_json_ready() -> None:
    out = summarise_backtest(_ls_decisions(), horizons=(1,), n_resamples=200)
    parsed = json.loads(dumps(out))
    assert parsed["n_decisions"] == 7
    assert set(parsed["horizons"]["1"]) == {"hit_rate", "hit_rate_vs_benchmark", "ic", "ic_conviction", "long_short"}
    assert parsed["horizons"]["1"]["long_short"]["periods"][0]["decided_at"] == "2024-01-02"


# ----------------------------------------------------------------------------------------------- forward returns


def test_add_months_clips_to_month_end() -> None:
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert add_months(date(2024, 11, 30), 3) == date(2025, 2, 28)
    assert add_months(date(2024, 12, 15), 1) == date(2025, 1, 15)
    assert add_months(date(2024, 3, 10), 12) == date(2025, 3, 10)


def _business_days(first: date, last: date) -> pd.Series:
    days = pd.bdate_range(first, last)
    return pd.Series(np.arange(100.0, 100.0 + len(days)), index=days)


def test_forward_return_uses_last_close_on_or_before_each_end() -> None:
    prices = _business_days(date(2024, 1, 1), date(2024, 12, 31))
    # 2024-03-09 is a Saturday: start close = Fri 03-08; end 2024-04-09 is a Tuesday
    p0 = prices[pd.Timestamp("2024-03-08")]
    p1 = prices[pd.Timestamp("2024-04-09")]
    assert forward_return(prices, date(2024, 3, 9), 1) == pytest.approx(p1 / p0 - 1)
    # end on a Sunday (2024-06-09) uses Friday 06-07
    p_fri = prices[pd.Timestamp("2024-06-07")]
    assert forward_return(prices, date(2024, 3, 9), 3) == pytest.approx(p_fri / p0 - 1)


def test_forward_return_never_looks_past_the_data() -> None:
    prices = _business_days(date(2024, 1, 1), date(2024, 6, 28))  # last bar Friday 2024-06-28
    assert forward_return(prices, date(2024, 3, 28), 3) == pytest.approx(
        prices[pd.Timestamp("2024-06-28")] / prices[pd.Timestamp("2024-03-28")] - 1
    )
    assert forward_return(prices, date(2024, 3, 29), 3) is None  # window ends 06-29, a day past the data
    assert forward_return(prices, date(2024, 3, 29), 3, known_through=date(2024, 6, 30)) is not None
    assert forward_return(prices, date(2024, 5, 1), 6) is None
    assert forward_return(prices, date(2023, 12, 1), 1) is None  # no close on/before the start
    assert forward_returns(prices, date(2024, 2, 1)) == {
        1: pytest.approx(prices[pd.Timestamp("2024-03-01")] / prices[pd.Timestamp("2024-02-01")] - 1),
        3: pytest.approx(prices[pd.Timestamp("2024-05-01")] / prices[pd.Timestamp("2024-02-01")] - 1),
        6: None,
    }


def test_forward_return_ignores_bars_after_the_window() -> None:
    prices = _business_days(date(2024, 1, 1), date(2024, 12, 31))
    poisoned = prices.copy()
    poisoned[poisoned.index > pd.Timestamp("2024-04-09")] = 1e9  # later bars must not matter
    assert forward_return(poisoned, date(2024, 3, 9), 1) == forward_return(prices, date(2024, 3, 9), 1)


def test_forward_return_handles_tz_aware_unsorted_and_missing_closes() -> None:
    idx = pd.DatetimeIndex(["2024-01-05 00:00:00-05:00", "2024-01-02 00:00:00-05:00", "2024-02-02 00:00:00-05:00"])
    prices = pd.Series([110.0, 100.0, 120.0], index=idx)
    assert forward_return(prices, date(2024, 1, 2), 1) == pytest.approx(0.20)  # 01-02 -> 02-02 (on the end day)
    assert forward_return(prices, date(2024, 1, 5), 1) is None  # ends 02-05, past the last bar
    with_gap = pd.Series([100.0, float("nan"), 130.0], index=pd.to_datetime(["2024-01-02", "2024-01-31", "2024-02-05"]))
    assert forward_return(with_gap, date(2024, 1, 2), 1) == pytest.approx(0.0)  # NaN on 01-31 skipped: 01-02 close
    by_date = pd.Series([50.0, 55.0], index=[date(2024, 1, 2), datetime(2024, 2, 2, 16, 0)])
    assert forward_return(by_date, date(2024, 1, 2), 1) == pytest.approx(0.10)


def test_forward_return_rejects_bad_horizon() -> None:
    with pytest.raises(ValueError, match="months"):
        forward_return(_business_days(date(2024, 1, 1), date(2024, 2, 1)), date(2024, 1, 2), 0)


def test_forward_return_on_recorded_prices(corpus_dir: Path) -> None:
    frame = pd.read_csv(corpus_dir / "prices" / "AAPL.csv")
    close = pd.Series(
        frame["Close"].to_numpy(), index=pd.to_datetime(frame["Date"], utc=True).dt.tz_convert("America/New_York")
    )
    by_day = {ts.date(): c for ts, c in close.items()}
    start = date(2023, 6, 30)  # a Friday; start + 3 months = Sat 2023-09-30, so the end close is Fri 2023-09-29
    expected = by_day[date(2023, 9, 29)] / by_day[start] - 1
    assert forward_return(close, start, 3) == pytest.approx(expected)
    last = max(by_day)
    assert forward_return(close, last - timedelta(days=20), 1) is None
