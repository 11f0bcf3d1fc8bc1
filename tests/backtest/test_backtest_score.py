"""Backtest scoring, schedule, request validation, tracker and table (pure, no research runs)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from equimind.backtest.models import BacktestRequest, DecisionRecord, Frequency, decision_dates
from equimind.backtest.report import build_caveats, build_table
from equimind.backtest.score import benchmark_returns, equity_curve, period_returns, traded_close
from equimind.backtest.stats import Decision, summarise_backtest
from equimind.backtest.store import BacktestStore, Prediction
from equimind.core.documents import Origin, Source
from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.research import Rating
from equimind.sources.base import PriceBar, PriceHistory


def history(ticker: str, closes: list[float], start: date = date(2025, 1, 1), *,
            dividends: dict[int, float] | None = None, splits: dict[int, float] | None = None) -> PriceHistory:
    bars = tuple(PriceBar(day=start + timedelta(days=i), open=c, high=c, low=c, close=c, volume=1.0,
                          dividend=(dividends or {}).get(i, 0.0), split=(splits or {}).get(i, 0.0))
                 for i, c in enumerate(closes))
    return PriceHistory(ticker, bars, Source.YAHOO_FINANCE, Origin.SNAPSHOT, "memory")


def test_schedule_is_anchored_on_the_start() -> None:
    assert decision_dates(date(2025, 1, 31), date(2025, 4, 30), Frequency.MONTHLY) == [
        date(2025, 1, 31), date(2025, 2, 28), date(2025, 3, 31), date(2025, 4, 30)]
    assert decision_dates(date(2025, 2, 1), date(2025, 8, 31), Frequency.QUARTERLY) == [
        date(2025, 2, 1), date(2025, 5, 1), date(2025, 8, 1)]
    assert len(decision_dates(date(2025, 1, 1), date(2025, 1, 29), Frequency.WEEKLY)) == 5


@pytest.mark.parametrize(("changes", "message"), [
    ({"start": date(2025, 9, 1)}, "after end"),
    ({"tickers": ["NVDA", "nvda"]}, "twice"),
    ({"tickers": ["NV DA"]}, "not ticker symbols"),
    ({"horizons": [0]}, "between 1 and 24"),
    ({"question": "Buy {ticker} as of {as_of}?"}, "only use"),
    ({"question": "Buy {ticker:d}?"}, "does not format"),
    ({"end": date(9999, 12, 31)}, "less than or equal"),
    ({"frequency": "weekly", "start": date(2020, 1, 1), "tickers": [f"T{i}" for i in range(20)]}, "at most"),
    ({"colour": "red"}, "Extra inputs"),
])
def test_request_validation(changes: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"tickers": ["NVDA"], "start": date(2025, 2, 1), "end": date(2025, 8, 31)}
    with pytest.raises(ValidationError, match=message):
        BacktestRequest.model_validate({**base, **changes})


def test_traded_close_undoes_dividends_and_later_splits() -> None:
    # adjusted series: a 1.0 dividend on day 2 (close before it 10.0 as traded -> factor 0.9), a 2:1 split on day 3
    h = history("X", [4.5, 4.5, 5.0, 5.0], dividends={2: 0.5}, splits={3: 2.0})
    c = traded_close(h, date(2025, 1, 2))
    assert c.bar_day == date(2025, 1, 2) and c.value == pytest.approx(10.0)  # pre-split, pre-dividend price
    assert traded_close(h, date(2025, 1, 10)).value == pytest.approx(5.0)
    with pytest.raises(NotFoundError, match="data starts"):
        traded_close(h, date(2024, 12, 31))


def test_benchmark_needs_every_ticker() -> None:
    fwd = {"A": {1: 0.1, 3: 0.2}, "B": {1: 0.3, 3: None}}
    assert benchmark_returns(fwd, [1, 3]) == {1: pytest.approx(0.2), 3: None}


def test_equity_curve_by_hand() -> None:
    a = history("A", [100.0] * 10 + [110.0] * 10 + [99.0] * 10)
    b = history("B", [50.0] * 10 + [45.0] * 10 + [54.0] * 10)
    d0, d1, d2 = date(2025, 1, 5), date(2025, 1, 15), date(2025, 1, 25)
    decisions = [Decision("A", d0, Rating.BUY, 0.5, 100.0), Decision("B", d0, Rating.SELL, 0.5, 50.0),
                 Decision("A", d1, Rating.HOLD, 0.5, 110.0), Decision("B", d1, Rating.STRONG_BUY, 0.5, 45.0)]
    curve = equity_curve(decisions, {"A": a, "B": b}, [d0, d1], d2)
    assert [p.day for p in curve] == [d0, d1, d2]
    # period 1: A +10%, B -10%; long A, short B -> ratings (0.10 + 0.10) / 2, long-short 0.10 - (-0.10)
    assert curve[1].ratings == pytest.approx(1.10) and curve[1].long_short == pytest.approx(1.20)
    assert curve[1].benchmark == pytest.approx(1.0)
    # period 2: A -10% (HOLD: cash), B +20% (long) -> ratings +10%, long-short +20%, benchmark +5%
    assert curve[2].ratings == pytest.approx(1.10 * 1.10) and curve[2].long_short == pytest.approx(1.20 * 1.20)
    assert curve[2].benchmark == pytest.approx(1.05) and curve[2].tickers["B"] == pytest.approx(54 / 50)
    assert period_returns({"A": a}, d1, date(2025, 3, 1)) is None  # past the data: never extrapolated
    assert len(equity_curve(decisions, {"A": a, "B": b}, [d0, d1], date(2025, 3, 1))) == 2


def _record(ticker: str, day: date, rating: Rating | None, fwd: dict[int, float | None]) -> DecisionRecord:
    side = {Rating.BUY: 1, Rating.SELL: -1, Rating.HOLD: 0}
    return DecisionRecord(
        ticker=ticker, decided_at=day, question="q", rating=rating, conviction=0.6, close=10.0, close_bar_date=day,
        close_check="equals research's last_close figure", forward_returns=fwd, benchmark_returns=fwd,
        position_returns={h: None if v is None or rating is None else side[rating] * v for h, v in fwd.items()},
        n_bull_claims=1, n_bear_claims=1, n_figures=3, degraded=["news: unavailable"], digest="x", duration_s=1.0)


def test_table_and_caveats() -> None:
    d0, d1 = date(2025, 1, 1), date(2025, 2, 1)
    records = [_record("A", d0, Rating.BUY, {1: 0.05, 3: None}), _record("B", d0, Rating.SELL, {1: 0.02, 3: None}),
               _record("A", d1, Rating.HOLD, {1: -0.01, 3: None}), _record("B", d1, None, {1: 0.03, 3: None})]
    decisions = [Decision(r.ticker, r.decided_at, r.rating, r.conviction, r.close, r.forward_returns,
                          r.benchmark_returns) for r in records if r.rating is not None]
    stats = summarise_backtest(decisions, [1, 3], n_resamples=300)
    table = build_table(stats, records, [1, 3])
    one, three = table
    assert (one.n_scored, one.n_pending, three.n_scored, three.n_pending) == (3, 0, 0, 3)
    assert one.hit_rate == pytest.approx(0.5)  # BUY up (hit), SELL up (miss); the HOLD is excluded
    assert one.mean_position_return == pytest.approx((0.05 - 0.02 + 0.0) / 3)
    assert three.hit_rate is None and "n=0" in three.caveats[0]
    request = BacktestRequest(tickers=["A", "B"], start=d0, end=d1)
    caveats = build_caveats(records, request, date(2025, 3, 1))
    assert caveats[0].startswith("3 rated decisions (2 decision days x 2 tickers, 1 refused)")
    assert "proves little" in caveats[0] and any("news 4" in c for c in caveats)


def test_store_round_trip(tmp_path: Path) -> None:
    store = BacktestStore(tmp_path / "backtest.sqlite")
    store.start_run("bt-1", {"tickers": ["A"]})
    day = date(2025, 1, 2)
    store.add_prediction(Prediction("bt-1", "A", day, "q", Rating.BUY, 0.7, 10.0, day, "d", "{}", 1.5))
    store.add_prediction(Prediction("bt-1", "B", day, "q", None, 0.0, 20.0, day, "e", "{}", 1.0))
    store.set_outcomes("bt-1", "A", day, {1: 0.1, 3: None}, {1: 0.05, 3: None}, date(2025, 3, 1))
    store.set_outcomes("bt-1", "A", day, {1: 0.2, 3: None}, {1: 0.05, 3: None}, date(2025, 4, 1))  # re-scored
    [decision] = store.decisions("bt-1")  # the refusal is left out of the statistics
    assert decision.forward_returns == {1: 0.2, 3: None} and decision.outcome(1, vs_benchmark=True) == \
        pytest.approx(0.15)
    assert store.summary("bt-1", [1], n_resamples=200)["n_decisions"] == 1
    with pytest.raises(NotFoundError, match="no report"):
        store.report_json("bt-1")
    store.finish_run("bt-1", '{"ok": 1}')
    assert store.report_json("bt-1") == '{"ok": 1}' and store.runs()[0].n_predictions == 2
    with pytest.raises(NotFoundError, match="no backtest run"):
        store.report_json("bt-2")
    store.close()
    import sqlite3

    con = sqlite3.connect(tmp_path / "backtest.sqlite")
    con.execute("PRAGMA user_version=99")
    con.close()
    with pytest.raises(ConfigError, match="schema version 99"):
        BacktestStore(tmp_path / "backtest.sqlite")
