"""The price series the dashboard's chart draws: daily OHLCV with SMA, Bollinger, RSI and MACD series (the formulas
are ``equimind.analytics.indicators``'). Built by ``EquiMindEngine.price_series``; served by the REST API."""

from __future__ import annotations

import math
from datetime import date
from typing import Any

from pydantic import BaseModel

from equimind.analytics.indicators import bollinger, macd, rsi_wilder, sma


def _clean(values: Any) -> list[float | None]:
    """Floats for JSON: NaN (an indicator not yet defined) becomes null."""
    return [None if math.isnan(v) else round(float(v), 6) for v in values]


class PriceSeries(BaseModel):
    """Daily OHLCV and indicator series of one ticker up to the as-of date (oldest first; null = not yet defined).

    Prices are as the source reports them (Yahoo: split- and dividend-adjusted); the indicators are computed from
    those closes with ``equimind.analytics.indicators`` (SMA, Bollinger 20/2, RSI 14 Wilder, MACD 12/26/9) over the
    whole fetched history, of which the last ``lookback_days`` are returned."""

    ticker: str
    as_of: date
    source: str
    origin: str
    location: str
    adjustment: str
    dates: list[date]
    open: list[float]
    high: list[float]
    low: list[float]
    close: list[float]
    volume: list[float]
    sma_20: list[float | None]
    sma_50: list[float | None]
    sma_200: list[float | None]
    bb_upper: list[float | None]
    bb_middle: list[float | None]
    bb_lower: list[float | None]
    rsi_14: list[float | None]
    macd: list[float | None]
    macd_signal: list[float | None]
    macd_hist: list[float | None]
    formulas: dict[str, str]

    @classmethod
    def from_history(cls, history: Any, as_of: date, keep_from: date) -> PriceSeries:
        """Indicators over all of ``history`` (already cut at ``as_of``), bars from ``keep_from`` on returned."""

        bars = history.bars
        closes = [b.close for b in bars]
        lo, mid, up = bollinger(closes)
        line, sig, hist = macd(closes)
        i0 = next((i for i, b in enumerate(bars) if b.day >= keep_from), len(bars))
        cut = slice(i0, None)
        series = {"sma_20": sma(closes, 20), "sma_50": sma(closes, 50), "sma_200": sma(closes, 200),
                  "bb_upper": up, "bb_middle": mid, "bb_lower": lo, "rsi_14": rsi_wilder(closes, 14),
                  "macd": line, "macd_signal": sig, "macd_hist": hist}
        return cls(
            ticker=history.ticker, as_of=as_of, source=history.source.value, origin=history.origin.value,
            location=history.location, adjustment=history.adjustment, dates=[b.day for b in bars[cut]],
            open=[b.open for b in bars[cut]], high=[b.high for b in bars[cut]], low=[b.low for b in bars[cut]],
            close=closes[cut], volume=[b.volume for b in bars[cut]],
            **{name: _clean(values[cut]) for name, values in series.items()},
            formulas={"sma_n": "mean of the last n closes", "bollinger": "sma20 ± 2 population std of 20 closes",
                      "rsi_14": "Wilder RSI, 14 days", "macd": "ema12 - ema26 (SMA-seeded EMAs)",
                      "macd_signal": "ema9 of the MACD line", "macd_hist": "macd - signal",
                      "history_start": bars[0].day.isoformat() if bars else ""},
        )
