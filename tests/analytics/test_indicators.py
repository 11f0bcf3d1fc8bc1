"""Indicators against independent implementations (pandas / plain loops written differently) and published values."""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.analytics.indicators import (
    bollinger,
    ema,
    indicator_figures,
    macd,
    realized_volatility,
    rsi_wilder,
    sma,
    unadjust_dividends,
)
from equimind.core.documents import Origin, Source
from equimind.sources.base import PriceBar, PriceHistory
from equimind.sources.market_snapshot import SnapshotPrices

# StockCharts' worked RSI example (ChartSchool, "Relative Strength Index"): closes and the published RSI(14) values.
SC_CLOSES = [44.3389, 44.0902, 44.1497, 43.6124, 44.3278, 44.8264, 45.0955, 45.4245, 45.8433, 46.0826, 45.8931,
             46.0328, 45.614, 46.282, 46.282, 46.0028, 46.0328, 46.4116, 46.2222, 45.6439, 46.2122, 46.2521,
             45.7137, 46.4515, 45.7835, 45.3548, 44.0288, 44.1783, 44.2181, 44.5672, 43.4205, 42.6628, 43.1314]
SC_RSI = [70.53, 66.32, 66.55, 69.41, 66.36, 57.97, 62.93, 63.26, 56.06, 62.38, 54.71, 50.42, 39.99, 41.46, 41.87,
          45.46, 37.30, 33.08, 37.77]


@pytest.fixture(scope="module")
def nvda_closes(corpus_dir: Path) -> pd.Series:
    h = SnapshotPrices(corpus_dir).history("NVDA")
    return pd.Series([b.close for b in h.bars], index=[b.day for b in h.bars])


def _pandas_ema_sma_seeded(s: pd.Series, n: int) -> pd.Series:
    """Independent EMA: pandas' recursive ewm over a series whose first value is the SMA of the first n closes."""
    seeded = pd.concat([pd.Series([s.iloc[:n].mean()]), s.iloc[n:].reset_index(drop=True)], ignore_index=True)
    out = seeded.ewm(span=n, adjust=False).mean()
    return pd.concat([pd.Series([np.nan] * (n - 1)), out], ignore_index=True)


def _loop_rsi(closes: list[float], n: int = 14) -> list[float]:
    """Wilder's RSI written as a plain loop over gains and losses."""
    out: list[float] = []
    gains = [max(b - a, 0.0) for a, b in itertools.pairwise(closes)]
    losses = [max(a - b, 0.0) for a, b in itertools.pairwise(closes)]
    ag, al = sum(gains[:n]) / n, sum(losses[:n]) / n
    out.append(100 - 100 / (1 + ag / al))
    for g, lo in zip(gains[n:], losses[n:], strict=False):
        ag, al = (ag * (n - 1) + g) / n, (al * (n - 1) + lo) / n
        out.append(100 - 100 / (1 + ag / al))
    return out


def test_rsi_matches_published_stockcharts_values() -> None:
    got = rsi_wilder(SC_CLOSES, 14)
    assert np.isnan(got[:14]).all()
    assert np.round(got[14:], 2).tolist() == SC_RSI


def test_rsi_matches_a_loop_implementation_on_real_prices(nvda_closes: pd.Series) -> None:
    ours = rsi_wilder(nvda_closes.to_numpy(), 14)[14:]
    assert ours == pytest.approx(_loop_rsi(nvda_closes.tolist()), rel=1e-10)


@pytest.mark.parametrize("n", [20, 50, 200])
def test_sma_and_ema_match_pandas(nvda_closes: pd.Series, n: int) -> None:
    x = nvda_closes.reset_index(drop=True)
    assert np.allclose(sma(x.to_numpy(), n), x.rolling(n).mean().to_numpy(), equal_nan=True, rtol=1e-12)
    assert np.allclose(ema(x.to_numpy(), n), _pandas_ema_sma_seeded(x, n).to_numpy(), equal_nan=True, rtol=1e-12)


def test_macd_matches_pandas(nvda_closes: pd.Series) -> None:
    x = nvda_closes.reset_index(drop=True)
    line = _pandas_ema_sma_seeded(x, 12) - _pandas_ema_sma_seeded(x, 26)
    valid = line.dropna().reset_index(drop=True)
    signal = pd.concat([pd.Series([np.nan] * 25), _pandas_ema_sma_seeded(valid, 9)], ignore_index=True)
    ours_line, ours_sig, ours_hist = macd(x.to_numpy())
    assert np.allclose(ours_line, line.to_numpy(), equal_nan=True)
    assert np.allclose(ours_sig, signal.to_numpy(), equal_nan=True)
    assert np.allclose(ours_hist, (line - signal).to_numpy(), equal_nan=True)
    assert np.isnan(ours_sig[:33]).all() and not np.isnan(ours_sig[33])


def test_bollinger_and_volatility_match_pandas_and_statistics(nvda_closes: pd.Series) -> None:
    x = nvda_closes.reset_index(drop=True)
    lo, _mid, up = bollinger(x.to_numpy(), 20, 2.0)
    sd = x.rolling(20).std(ddof=0)
    assert np.allclose(up, (x.rolling(20).mean() + 2 * sd).to_numpy(), equal_nan=True)
    assert np.allclose(lo, (x.rolling(20).mean() - 2 * sd).to_numpy(), equal_nan=True)
    rets = [math.log(b / a) for a, b in zip(x.tolist()[-21:], x.tolist()[-20:], strict=False)]
    assert realized_volatility(x.to_numpy(), 20) == pytest.approx(statistics.stdev(rets) * math.sqrt(252))
    assert math.isnan(realized_volatility(x.to_numpy()[:10], 20))


@pytest.mark.parametrize(("ticker", "day", "published_close"), [
    ("AAPL", date(2022, 12, 30), 129.93),  # Apple's 2022 year-end close
    ("AAPL", date(2023, 6, 30), 193.97),  # Apple's first close above $3 trillion
    ("MSFT", date(2022, 12, 30), 239.82),
    ("JPM", date(2022, 12, 30), 134.10),
])
def test_dividend_unadjustment_recovers_published_closes(corpus_dir: Path, ticker: str, day: date,
                                                         published_close: float) -> None:
    h = SnapshotPrices(corpus_dir).history(ticker)
    raw = unadjust_dividends([b.close for b in h.bars], [b.dividend for b in h.bars])
    i = [b.day for b in h.bars].index(day)
    assert round(raw[i], 2) == published_close
    assert h.bars[i].close < published_close - 0.5  # the adjusted close really differs


def test_figures_use_only_bars_up_to_the_as_of_date(corpus_dir: Path) -> None:
    full = SnapshotPrices(corpus_dir).history("NVDA")
    as_of = date(2025, 3, 31)
    cut = full.up_to(as_of)
    figs, deg = indicator_figures(cut)
    assert deg == [] and {f.as_of for f in figs} == {as_of}
    # Appending later bars with absurd prices changes nothing at the as-of cut.
    later = tuple(replace(b, close=b.close * 50, high=b.high * 50) for b in full.bars if b.day > as_of)
    tampered = PriceHistory(full.ticker, cut.bars + later, full.source, full.origin, full.location)
    again, _ = indicator_figures(tampered.up_to(as_of))
    assert [(f.id, f.value) for f in again] == [(f.id, f.value) for f in figs]
    byid = {f.id: f for f in figs}
    assert byid["sma_20"].value == pytest.approx(float(np.mean([b.close for b in cut.bars[-20:]])))
    assert byid["high_52w"].value == max(b.high for b in cut.bars if b.day >= as_of - timedelta(days=364))
    assert byid["rsi_14"].provenance["last_bar"] == as_of and byid["rsi_14"].unit == "index"


def test_short_history_degrades_instead_of_inventing(corpus_dir: Path) -> None:
    h = SnapshotPrices(corpus_dir).history("NVDA", start=date(2025, 5, 1), end=date(2025, 6, 30))
    figs, deg = indicator_figures(h)
    ids = {f.id for f in figs}
    assert {"sma_20", "rsi_14", "bb_upper_20_2"} <= ids
    assert {"sma_200", "ema_200", "high_52w", "realized_vol_252d"}.isdisjoint(ids)
    assert {d.capability for d in deg} >= {"indicators.sma_200", "indicators.high_52w"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1.0, max_value=1000.0), min_size=30, max_size=80))
def test_rsi_bounded_and_bands_ordered(prices: list[float]) -> None:
    r = rsi_wilder(prices)
    assert np.all((r[14:] >= 0) & (r[14:] <= 100))
    lo, mid, up = bollinger(prices)
    assert np.all(lo[19:] <= mid[19:] + 1e-9) and np.all(mid[19:] <= up[19:] + 1e-9)


def test_bars_must_be_strictly_ascending() -> None:
    bar = PriceBar(day=date(2025, 1, 2), open=1, high=1, low=1, close=1, volume=1)
    with pytest.raises(ValueError, match="ascending"):
        PriceHistory("X", (bar, bar), Source.YAHOO_FINANCE, Origin.SNAPSHOT, "test")
