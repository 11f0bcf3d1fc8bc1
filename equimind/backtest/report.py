"""The backtest report's table (one row per horizon) and its plain-language caveats."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import numpy as np

from equimind.backtest.models import CLOSE_EQUALS, BacktestRequest, DecisionRecord, HorizonRow


def _ci(block: Mapping[str, Any] | None) -> tuple[float, float] | None:
    ci = (block or {}).get("ci")
    return None if ci is None else (float(ci["low"]), float(ci["high"]))


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(np.mean(known)) if known else None


def build_table(stats: Mapping[str, Any], records: Sequence[DecisionRecord], horizons: Sequence[int]
                ) -> list[HorizonRow]:
    """One row per horizon from ``summarise_backtest`` output and the decisions' returns."""
    rows: list[HorizonRow] = []
    rated = [r for r in records if r.rating is not None]
    for h in horizons:
        s = stats["horizons"][str(h)]
        hr, hrb, ic, icc, ls = (s["hit_rate"], s["hit_rate_vs_benchmark"], s["ic"], s["ic_conviction"],
                                s["long_short"])
        scored = [r for r in rated if r.forward_returns.get(h) is not None]
        rows.append(HorizonRow(
            horizon_months=h, n_scored=len(scored), n_pending=len(rated) - len(scored), n_directional=hr["n"],
            hit_rate=hr["rate"], hit_rate_ci=_ci(hr), base_rate_up=hr["base_rate_up"],
            hit_rate_vs_benchmark=hrb["rate"], ic=ic["ic"], ic_ci=_ci(ic), ic_p_value=ic["p_value"],
            ic_conviction=icc["ic"], long_short_mean=ls["mean_spread"], long_short_ci=_ci(ls), n_dates=ls["n_dates"],
            mean_position_return=_mean([r.position_returns.get(h) for r in scored]),
            mean_buy_and_hold=_mean([r.forward_returns.get(h) for r in scored]),
            mean_benchmark=_mean([r.benchmark_returns.get(h) for r in scored]),
            caveats=[f"hit rate: {hr['caveat']}", f"IC: {ic['caveat']}", f"long-short: {ls['caveat']}"]))
    return rows


def build_caveats(records: Sequence[DecisionRecord], request: BacktestRequest, data_end: date) -> list[str]:
    """What the numbers cannot show, in words (sample size first)."""
    rated = [r for r in records if r.rating is not None]
    days = sorted({r.decided_at for r in records})
    ratings = Counter(r.rating.value for r in rated if r.rating is not None)
    out = [
        f"{len(rated)} rated decisions ({len(days)} decision days x {len(request.tickers)} tickers"
        f"{f', {len(records) - len(rated)} refused' if len(records) != len(rated) else ''}); ratings: "
        + (", ".join(f"{k} {v}" for k, v in sorted(ratings.items())) or "none") + ". A sample this small proves "
        "little: with n decisions a hit rate's standard error is about 0.5/sqrt(n) (0.5/sqrt(30) = 0.09), so even a "
        "real edge of a few points cannot be told from luck, and the percentile bootstrap is itself unreliable "
        "below about 30 observations.",
        "The decisions are not independent: names decided on the same day share the market's move, and at horizons "
        "longer than the spacing of the schedule a ticker's consecutive windows overlap. The effective sample is "
        "smaller than n and the bootstrap CIs, which resample decisions as if independent, are too narrow.",
        "One market period and a universe chosen today (selection and survivorship bias); no transaction or "
        "borrowing costs; the long-short and ratings portfolios are rebalanced at every decision day.",
        f"Outcomes exist only where the recorded prices do (last bar {data_end}): a window that runs past it is "
        "not scored (never extrapolated), so the longer horizons rest on fewer, earlier decisions.",
    ]
    degraded = Counter(d.capability for r in records for d in r.degraded)
    if degraded:
        out.append("Capabilities unavailable to some decisions (decision count): "
                   + ", ".join(f"{k} {v}" for k, v in sorted(degraded.items()))
                   + ". Each decision's `degraded` list says why.")
    if any(r.close_check != CLOSE_EQUALS for r in records):
        out.append("Some decisions' close was not checked against research's own last_close figure (see "
                   "close_check).")
    return out
