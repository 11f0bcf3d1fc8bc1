"""Technical indicators from daily OHLCV. Pure functions over float arrays (oldest first), NaN where undefined.

Conventions (each is a choice; the tests pin them against independent implementations and published values):
- SMA(n): arithmetic mean of the last n closes.
- EMA(n): alpha = 2 / (n + 1), seeded with the SMA of the first n values (the TA-Lib convention), so the first
  defined value is at index n-1. It depends on where the history starts; we always start it ``lookback`` days
  before the as-of date (2 years by default) so live and snapshot runs agree.
- RSI(14): J. Welles Wilder, *New Concepts in Technical Trading Systems* (1978): first average gain/loss is the
  simple mean of the first 14 changes, then ``avg = (avg * 13 + x) / 14``; RSI = 100 - 100 / (1 + gain/loss).
- MACD(12, 26, 9): Gerald Appel: EMA12 - EMA26; signal = EMA9 of the MACD line (from its first defined value);
  histogram = MACD - signal.
- Bollinger(20, 2): John Bollinger: SMA20 ± 2 population standard deviations (ddof = 0) of the last 20 closes.
- 52-week range: highest high and lowest low of the bars in the 52 weeks (364 days) ending on the last bar.
- Realised volatility(n): sample standard deviation (ddof = 1) of the last n daily log returns × sqrt(252).

``indicator_figures`` applies them to a PriceHistory cut at the as-of date and returns ``models.Figure``s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from equimind.core.degraded import Degradation
from equimind.core.research import Figure
from equimind.sources.base import PriceHistory

Array = npt.NDArray[np.float64]
TRADING_DAYS = 252


def _arr(values: Sequence[float] | Array) -> Array:
    return np.asarray(values, dtype=np.float64)


def sma(values: Sequence[float] | Array, n: int) -> Array:
    x = _arr(values)
    out = np.full(x.shape, np.nan)
    if n <= 0 or len(x) < n:
        return out
    c = np.cumsum(np.insert(x, 0, 0.0))
    out[n - 1:] = (c[n:] - c[:-n]) / n
    return out


def ema(values: Sequence[float] | Array, n: int) -> Array:
    """EMA seeded with the SMA of the first n non-NaN values (leading NaNs are skipped)."""
    x = _arr(values)
    out = np.full(x.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(x))
    if n <= 0 or len(valid) < n:
        return out
    first = int(valid[0])
    alpha = 2.0 / (n + 1)
    seed_at = first + n - 1
    out[seed_at] = float(np.mean(x[first:seed_at + 1]))
    for i in range(seed_at + 1, len(x)):
        out[i] = alpha * x[i] + (1 - alpha) * out[i - 1]
    return out


def rsi_wilder(closes: Sequence[float] | Array, n: int = 14) -> Array:
    x = _arr(closes)
    out = np.full(x.shape, np.nan)
    if len(x) <= n:
        return out
    d = np.diff(x)
    gains, losses = np.clip(d, 0, None), np.clip(-d, 0, None)
    avg_g, avg_l = float(gains[:n].mean()), float(losses[:n].mean())
    out[n] = _rsi(avg_g, avg_l)
    for i in range(n, len(d)):
        avg_g = (avg_g * (n - 1) + gains[i]) / n
        avg_l = (avg_l * (n - 1) + losses[i]) / n
        out[i + 1] = _rsi(avg_g, avg_l)
    return out


def _rsi(avg_gain: float, avg_loss: float) -> float:
    if avg_loss == 0:
        return 100.0 if avg_gain > 0 else 50.0
    return 100.0 - 100.0 / (1.0 + avg_gain / avg_loss)


def macd(closes: Sequence[float] | Array, fast: int = 12, slow: int = 26,
         signal: int = 9) -> tuple[Array, Array, Array]:
    """(macd line, signal line, histogram)."""
    line = ema(closes, fast) - ema(closes, slow)
    sig = ema(line, signal)
    return line, sig, line - sig


def bollinger(closes: Sequence[float] | Array, n: int = 20, k: float = 2.0) -> tuple[Array, Array, Array]:
    """(lower, middle, upper) bands."""
    x = _arr(closes)
    mid = sma(x, n)
    sd = np.full(x.shape, np.nan)
    if len(x) >= n:
        windows = np.lib.stride_tricks.sliding_window_view(x, n)
        sd[n - 1:] = windows.std(axis=1, ddof=0)
    return mid - k * sd, mid, mid + k * sd


def realized_volatility(closes: Sequence[float] | Array, n: int) -> float:
    """Annualised sample std of the last n daily log returns; NaN with fewer than n returns."""
    x = _arr(closes)
    if len(x) < n + 1 or n < 2:
        return math.nan
    r = np.diff(np.log(x[-(n + 1):]))
    return float(np.std(r, ddof=1) * math.sqrt(TRADING_DAYS))


def range_52w(days: Sequence[date], highs: Sequence[float], lows: Sequence[float]) -> tuple[float, float, date]:
    """(highest high, lowest low, first day used) over the 364 days ending on the last bar."""
    start = days[-1] - timedelta(days=364)
    idx = [i for i, d in enumerate(days) if d >= start]
    return max(highs[i] for i in idx), min(lows[i] for i in idx), days[idx[0]]


def unadjust_dividends(closes: Sequence[float], dividends: Sequence[float]) -> list[float]:
    """Undo Yahoo's dividend adjustment (CRSP method: bars before an ex-date are multiplied by 1 - D / close of the
    bar before it) and return the closes as traded, on the series' split basis. Walking back from the last bar with
    the running multiplier M of the bars after the ex-date: raw_prev = adj_prev / M + D, f = 1 - D / raw_prev."""
    n = len(closes)
    raw = [0.0] * n
    m = 1.0
    for t in range(n - 1, -1, -1):
        if t + 1 < n and dividends[t + 1] > 0:
            d = dividends[t + 1]
            m *= 1.0 - d / (closes[t] / m + d)
        raw[t] = closes[t] / m
    return raw


# ------------------------------------------------------------------------------------------------- figures

_SPECS: tuple[tuple[str, str, int], ...] = (
    ("sma_20", "Simple moving average, 20 days", 20), ("sma_50", "Simple moving average, 50 days", 50),
    ("sma_200", "Simple moving average, 200 days", 200), ("ema_20", "Exponential moving average, 20 days", 20),
    ("ema_50", "Exponential moving average, 50 days", 50), ("ema_200", "Exponential moving average, 200 days", 200),
)


class _Collector:
    def __init__(self, history: PriceHistory, currency: str) -> None:
        self.h, self.currency = history, currency
        self.figures: list[Figure] = []
        self.degraded: list[Degradation] = []
        bars = history.bars
        self.prov: dict[str, Any] = {
            "source": history.source.value, "origin": history.origin.value, "location": history.location,
            "first_bar": bars[0].day, "last_bar": bars[-1].day, "bars": len(bars), "adjustment": history.adjustment,
        }

    def add(self, fid: str, name: str, value: float, unit: str | None, formula: str, needs: int,
            **inputs: Any) -> None:
        if math.isnan(value):
            have = len(self.h.bars)
            self.degraded.append(Degradation(capability=f"indicators.{fid}",
                                             reason=f"needs {needs} bars up to the as-of date, have {have}"))
            return
        self.figures.append(Figure(id=fid, name=name, value=float(value), unit=unit or self.currency,
                                   as_of=self.h.bars[-1].day, formula=formula, inputs=inputs, provenance=self.prov))


def indicator_figures(history: PriceHistory, *, currency: str = "USD") -> tuple[list[Figure], list[Degradation]]:
    """All indicators at the last bar of ``history`` (cut it at the as-of date first: ``history.up_to(as_of)``)."""
    if not history.bars:
        raise ValueError("indicator_figures needs at least one bar")
    c = _Collector(history, currency)
    closes = _arr([b.close for b in history.bars])
    for fid, name, n in _SPECS:
        series = sma(closes, n) if fid.startswith("sma") else ema(closes, n)
        kind = "mean" if fid.startswith("sma") else "ema(alpha=2/(n+1), SMA seed)"
        c.add(fid, name, series[-1], None, f"{kind} of close over {n} bars", n, window=n)
    c.add("rsi_14", "Relative strength index, 14 days (Wilder)", rsi_wilder(closes, 14)[-1], "index",
          "100 - 100/(1 + avg_gain/avg_loss), Wilder smoothing", 15, window=14)
    line, sig, hist = macd(closes)
    c.add("macd_12_26", "MACD line (EMA12 - EMA26)", line[-1], None, "ema12(close) - ema26(close)", 26)
    c.add("macd_signal_9", "MACD signal (EMA9 of MACD)", sig[-1], None, "ema9(macd line)", 34)
    c.add("macd_hist", "MACD histogram", hist[-1], None, "macd line - signal", 34)
    lo, mid, up = bollinger(closes)
    c.add("bb_upper_20_2", "Bollinger upper band (20, 2)", up[-1], None, "sma20 + 2*std20 (ddof=0)", 20)
    c.add("bb_middle_20", "Bollinger middle band (SMA 20)", mid[-1], None, "sma20", 20)
    c.add("bb_lower_20_2", "Bollinger lower band (20, 2)", lo[-1], None, "sma20 - 2*std20 (ddof=0)", 20)
    if not math.isnan(up[-1]) and up[-1] > lo[-1]:
        c.add("bb_percent_b", "Bollinger %B", (closes[-1] - lo[-1]) / (up[-1] - lo[-1]), "ratio",
              "(close - lower) / (upper - lower)", 20)
    days = [b.day for b in history.bars]
    hi, low, first = range_52w(days, [b.high for b in history.bars], [b.low for b in history.bars])
    full_year = (days[-1] - days[0]).days >= 364
    c.add("high_52w", "52-week high", hi if full_year else math.nan, None, "max(high) over 52 weeks", 252,
          from_day=first)
    c.add("low_52w", "52-week low", low if full_year else math.nan, None, "min(low) over 52 weeks", 252,
          from_day=first)
    c.add("realized_vol_20d", "Realised volatility, 20 days (annualised)", realized_volatility(closes, 20),
          "ratio", "std(log returns, ddof=1) * sqrt(252)", 21, window=20)
    c.add("realized_vol_252d", "Realised volatility, 252 days (annualised)", realized_volatility(closes, 252),
          "ratio", "std(log returns, ddof=1) * sqrt(252)", 253, window=252)
    return c.figures, c.degraded
