"""Scoring a walk-forward backtest: decision-day closes, forward returns, the equal-weight benchmark, equity curves.

Everything here reads prices *after* the decision days (that is what scoring is); nothing here feeds a decision.

Conventions (see also ``equimind.backtest.stats``):
* Forward returns are total returns from the dividend-adjusted closes (dividends reinvested), last close on/before
  the decision day to the last close on/before ``day + h months``; None when that day is after the last bar.
* The close recorded for a decision is the price as traded on the last bar on/before the decision day: the
  adjustment for later dividends undone (``unadjust_dividends``) and restated to the share basis of that day
  (splits after it undone) -- the same figure research's ``last_close`` shows on a point-in-time view.
* Equal-weight benchmark at (day, h): the mean forward return of every ticker of the universe; None unless all of
  them have one (a partial benchmark would not be the universe's).
* Equity curves chain the holding periods between consecutive decision days (rebalanced at each decision, no
  costs): "ratings" holds +1/N of each BUY-side name, -1/N of each SELL-side name and cash for HOLD; "long-short"
  is the mean long-side return minus the mean short-side return (an empty side counts 0); "benchmark" is the
  equal-weight buy-and-hold of the universe. The last decision's period ends at the next scheduled day and is
  left out when that day is after the data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from equimind.analytics.indicators import unadjust_dividends
from equimind.backtest.stats import Decision, forward_returns, rating_side
from equimind.core.errors import NotFoundError

if TYPE_CHECKING:
    import pandas as pd

    from equimind.sources.base import PriceHistory


@dataclass(frozen=True)
class TradedClose:
    value: float
    bar_day: date


def traded_close(history: PriceHistory, day: date) -> TradedClose:
    """The as-traded close of the last bar on/before ``day`` (see the module conventions)."""
    bars = history.bars
    idx = [i for i, b in enumerate(bars) if b.day <= day]
    if not idx:
        first = history.first_day
        raise NotFoundError(f"no price bar for {history.ticker} on or before {day}"
                            + (f"; the data starts {first}: start the backtest later" if first else ""))
    i = idx[-1]
    raw = unadjust_dividends([b.close for b in bars], [b.dividend for b in bars])[i]
    later = math.prod(b.split for b in bars if b.day > day and b.split and b.split > 0)
    return TradedClose(raw * later, bars[i].day)


def adjusted_series(history: PriceHistory) -> pd.Series:
    """Dividend- and split-adjusted closes indexed by bar day (what total returns are computed from)."""
    import pandas as pd

    return pd.Series([b.close for b in history.bars], index=[b.day for b in history.bars], dtype="float64")


def close_on_or_before(history: PriceHistory, day: date) -> float | None:
    """Adjusted close of the last bar on/before ``day``; None when ``day`` is before the first bar or after the last
    (a period that runs past the data is never extrapolated)."""
    if history.last_day is None or day > history.last_day:
        return None
    closes = [b.close for b in history.bars if b.day <= day]
    return closes[-1] if closes else None


def score_forward(histories: Mapping[str, PriceHistory], ticker: str, day: date,
                  horizons: Sequence[int]) -> dict[int, float | None]:
    h = histories[ticker]
    return forward_returns(adjusted_series(h), day, horizons, known_through=h.last_day)


def benchmark_returns(forward: Mapping[str, Mapping[int, float | None]],
                      horizons: Sequence[int]) -> dict[int, float | None]:
    """Equal-weight mean of the universe's forward returns per horizon; None unless every ticker has one."""
    out: dict[int, float | None] = {}
    for h in horizons:
        values = [f.get(h) for f in forward.values()]
        known = [v for v in values if v is not None]
        out[h] = float(np.mean(known)) if known and len(known) == len(values) else None
    return out


@dataclass(frozen=True)
class EquityPoint:
    day: date
    ratings: float
    long_short: float
    benchmark: float
    tickers: dict[str, float]  # each ticker's buy-and-hold growth of 1


def period_returns(histories: Mapping[str, PriceHistory], start: date, end: date) -> dict[str, float] | None:
    """Each ticker's adjusted-close return from ``start`` to ``end``; None when any one is unknown."""
    out: dict[str, float] = {}
    for t, h in histories.items():
        a, b = close_on_or_before(h, start), close_on_or_before(h, end)
        if a is None or b is None:
            return None
        out[t] = b / a - 1.0
    return out


def equity_curve(decisions: Sequence[Decision], histories: Mapping[str, PriceHistory],
                 schedule: Sequence[date], next_day: date) -> list[EquityPoint]:
    """Growth of 1 for the ratings portfolio, the long-short spread and the equal-weight benchmark (and each
    ticker's buy-and-hold), chained over the periods between decision days (see the module conventions)."""
    by_day: dict[date, dict[str, int]] = {}
    for d in decisions:
        by_day.setdefault(d.decided_at, {})[d.ticker] = rating_side(d.rating)
    bounds = [*schedule, next_day]
    first = schedule[0] if schedule else next_day
    level = {"ratings": 1.0, "long_short": 1.0, "benchmark": 1.0}
    tick = dict.fromkeys(histories, 1.0)
    points = [EquityPoint(first, 1.0, 1.0, 1.0, dict(tick))]
    for start, end in pairwise(bounds):
        rets = period_returns(histories, start, end)
        if rets is None:
            break
        sides = by_day.get(start, {})
        n = len(rets)
        longs = [r for t, r in rets.items() if sides.get(t, 0) > 0]
        shorts = [r for t, r in rets.items() if sides.get(t, 0) < 0]
        level["ratings"] *= 1.0 + sum(sides.get(t, 0) * r for t, r in rets.items()) / n
        level["long_short"] *= 1.0 + (float(np.mean(longs)) if longs else 0.0) - (
            float(np.mean(shorts)) if shorts else 0.0)
        level["benchmark"] *= 1.0 + sum(rets.values()) / n
        for t, r in rets.items():
            tick[t] *= 1.0 + r
        points.append(EquityPoint(end, level["ratings"], level["long_short"], level["benchmark"], dict(tick)))
    return points
