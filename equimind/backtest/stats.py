"""Statistics for the walk-forward backtester: forward returns, hit rate, information coefficient, long-short spread.

Every statistic comes with a percentile-bootstrap CI (equimind.evaluation.metrics) and a plain-language caveat, because
a backtest of a few dozen decisions almost never separates skill from luck. Conventions, all deliberate:

* Forward return at horizon h months: close on the last trading day on/before ``start + h`` calendar months divided by
  the close on the last trading day on/before ``start``, minus 1. ``None`` when the window runs past the data; a
  return is never extrapolated. Excess return = forward return - benchmark forward return over the same window.
* Side: BUY / STRONG_BUY are long (+1), SELL / STRONG_SELL short (-1), HOLD flat (0).
* Hit rate: a long decision hits when its return is > 0, a short one when it is < 0 (exactly 0 is a miss). HOLD is
  excluded because it makes no directional call; the count of excluded HOLDs is reported. Compare the rate with
  ``base_rate_up`` (the share of all decisions whose return was > 0): in a rising market "always BUY" scores that.
* Information coefficient (Grinold & Kahn, *Active Portfolio Management*, 2000, ch. 6): Spearman rank correlation
  between a numeric score (STRONG_SELL = -2 ... STRONG_BUY = +2, optionally × conviction) and the return, over all
  decisions with a known return (HOLD included as 0).
* Long-short: per decision date, equal-weight mean return of the long side minus that of the short side. An empty
  side contributes 0 (the portfolio is then long-only or short-only that date; a date with only HOLDs is flat, 0),
  unless ``require_both_sides`` is set, in which case such a date's spread is 0. The mean over dates is a per-period
  average, not a compounded, tradable return when horizons overlap.

Caveats the CI does not capture: decisions on the same ticker less than h months apart have overlapping windows and
correlated outcomes, and decisions on the same date share market moves; both make the true interval wider. The
caveat text says so when windows overlap.
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from itertools import pairwise
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from equimind.core.research import Rating
from equimind.evaluation.metrics import BootstrapCI, FloatArray, IndexArray, bootstrap_ci, bootstrap_rows

if TYPE_CHECKING:
    import pandas as pd

HORIZONS_MONTHS: tuple[int, ...] = (1, 3, 6)

RATING_SCORE: Mapping[Rating, int] = MappingProxyType(
    {Rating.STRONG_SELL: -2, Rating.SELL: -1, Rating.HOLD: 0, Rating.BUY: 1, Rating.STRONG_BUY: 2}
)


def rating_score(rating: Rating, conviction: float | None = None) -> float:
    """STRONG_SELL=-2, SELL=-1, HOLD=0, BUY=+1, STRONG_BUY=+2; multiplied by ``conviction`` when it is given."""
    score = float(RATING_SCORE[rating])
    return score if conviction is None else score * conviction


def rating_side(rating: Rating) -> int:
    """+1 for the BUY side, -1 for the SELL side, 0 for HOLD."""
    score = RATING_SCORE[rating]
    return (score > 0) - (score < 0)


@dataclass(frozen=True)
class Decision:
    """One backtested recommendation and its outcomes. Returns are keyed by horizon in months; None = not yet known."""

    ticker: str
    decided_at: date
    rating: Rating
    conviction: float
    close: float
    forward_returns: Mapping[int, float | None] = field(default_factory=dict)
    benchmark_returns: Mapping[int, float | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= self.conviction <= 1.0:
            raise ValueError(f"conviction={self.conviction}: must lie in [0, 1]")
        if not self.close > 0:
            raise ValueError(f"close={self.close} for {self.ticker} on {self.decided_at}: a close must be > 0")
        # own copies, so a caller mutating its dict later cannot change a recorded decision
        object.__setattr__(self, "forward_returns", dict(self.forward_returns))
        object.__setattr__(self, "benchmark_returns", dict(self.benchmark_returns))

    def outcome(self, horizon: int, vs_benchmark: bool = False) -> float | None:
        """Forward return at ``horizon`` (minus the benchmark's when ``vs_benchmark``); None when unknown."""
        fwd = self.forward_returns.get(horizon)
        if fwd is None or not vs_benchmark:
            return fwd
        bench = self.benchmark_returns.get(horizon)
        return None if bench is None else fwd - bench


# ----------------------------------------------------------------------------------------------------------------
# Forward returns from a price series


def add_months(d: date, months: int) -> date:
    """Calendar months later, the day clipped to the month's end (2024-01-31 + 1 month = 2024-02-29)."""
    years, month0 = divmod(d.month - 1 + months, 12)
    year, month = d.year + years, month0 + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def _as_date(value: Any) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    import pandas as pd

    return pd.Timestamp(value).date()  # type: ignore[no-any-return]


def _closes(prices: pd.Series) -> tuple[np.ndarray[Any, np.dtype[np.int64]], FloatArray]:
    """(date ordinals ascending, closes) with NaN closes dropped; a date's own local calendar date is kept."""
    clean = prices.dropna()
    ords = np.array([_as_date(v).toordinal() for v in clean.index], dtype=np.int64)
    values = clean.to_numpy(dtype=np.float64)
    order = np.argsort(ords, kind="stable")
    return ords[order], values[order]


def forward_return(prices: pd.Series, start: date, months: int, *, known_through: date | None = None) -> float | None:
    """Simple return from the last close on/before ``start`` to the last close on/before ``start + months``.

    ``prices`` is a close series indexed by date (dates, datetimes or a DatetimeIndex, tz-aware or not; a tz-aware
    timestamp counts for its local calendar date). None when no close exists on/before ``start`` or when
    ``start + months`` lies after ``known_through`` (default: the last date in the series): the window runs past the
    data and is never extrapolated. Pass ``known_through`` when the data is known to be complete through a later day
    (e.g. a weekend after the last bar).
    """
    if months < 1:
        raise ValueError(f"months={months}: a forward horizon must be >= 1 month")
    ords, values = _closes(prices)
    if ords.size == 0:
        return None
    end = add_months(start, months)
    last_known = known_through.toordinal() if known_through else int(ords[-1])
    if end.toordinal() > last_known:
        return None
    i0 = int(np.searchsorted(ords, start.toordinal(), side="right")) - 1
    i1 = int(np.searchsorted(ords, end.toordinal(), side="right")) - 1
    if i0 < 0:
        return None
    if not values[i0] > 0:
        raise ValueError(f"close {values[i0]} on {date.fromordinal(int(ords[i0]))} is not positive; fix the data")
    return float(values[i1] / values[i0] - 1.0)


def forward_returns(
    prices: pd.Series, start: date, horizons: Sequence[int] = HORIZONS_MONTHS, *, known_through: date | None = None
) -> dict[int, float | None]:
    """:func:`forward_return` for every horizon."""
    return {h: forward_return(prices, start, h, known_through=known_through) for h in horizons}


# ----------------------------------------------------------------------------------------------------------------
# Caveats


def windows_overlap(decisions: Sequence[Decision], horizon: int) -> bool:
    """True when two decisions on the same ticker are less than ``horizon`` months apart (correlated outcomes)."""
    by_ticker: dict[str, list[date]] = defaultdict(list)
    for d in decisions:
        by_ticker[d.ticker].append(d.decided_at)
    for days in by_ticker.values():
        days.sort()
        if any(later < add_months(earlier, horizon) for earlier, later in pairwise(days)):
            return True
    return False


def sample_caveat(
    n: int, ci: BootstrapCI | None, unit: str, null: float, null_label: str, overlapping: bool = False
) -> str:
    """Plain-language reading of a statistic's sample size and CI against the no-skill value ``null``."""
    if n == 0:
        return f"n=0 {unit}: no outcome is known at this horizon yet; nothing can be concluded."
    parts: list[str] = []
    if ci is None:
        parts.append("the statistic is undefined on this sample (too few or constant values)")
    else:
        pct = round(100 * (1 - ci.alpha))
        span = f"the {pct}% CI [{ci.low:.3f}, {ci.high:.3f}]"
        if ci.contains(null):
            parts.append(f"{span} includes {null_label}, so it cannot distinguish skill from luck")
        else:
            parts.append(f"{span} excludes {null_label}")
    if n < 30:
        parts.append(f"with fewer than 30 {unit} the bootstrap interval is itself unreliable")
    if overlapping:
        parts.append("forward windows overlap, so outcomes are correlated and the true interval is wider")
    return f"n={n} {unit}: " + "; ".join(parts) + "."


# ----------------------------------------------------------------------------------------------------------------
# Hit rate


@dataclass(frozen=True)
class HitRate:
    horizon_months: int
    vs_benchmark: bool
    n: int  # directional decisions with a known outcome
    hits: int
    rate: float | None
    ci: BootstrapCI | None
    base_rate_up: float | None  # share of all known outcomes > 0 (what "always BUY" would score)
    n_hold_excluded: int
    n_missing: int  # directional decisions whose outcome is not known yet
    caveat: str


def hit_rate(
    decisions: Sequence[Decision],
    horizon: int,
    *,
    vs_benchmark: bool = False,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    alpha: float = 0.05,
) -> HitRate:
    """Share of directional decisions whose return at ``horizon`` went their way (see the module conventions)."""
    flags: list[float] = []
    ups: list[float] = []
    holds = missing = 0
    for d in decisions:
        ret, side = d.outcome(horizon, vs_benchmark), rating_side(d.rating)
        if ret is not None:
            ups.append(float(ret > 0))
        if side == 0:
            holds += 1
        elif ret is None:
            missing += 1
        else:
            flags.append(float(ret * side > 0))
    ci = bootstrap_ci(flags, n_resamples, seed, alpha) if flags else None
    overlap = windows_overlap(decisions, horizon)
    caveat = sample_caveat(len(flags), ci, "directional decisions", 0.5, "a coin flip (0.5)", overlap)
    rate, base = (float(np.mean(flags)) if flags else None), (float(np.mean(ups)) if ups else None)
    return HitRate(horizon, vs_benchmark, len(flags), int(sum(flags)), rate, ci, base, holds, missing, caveat)


# ----------------------------------------------------------------------------------------------------------------
# Information coefficient


def spearman_rows(x: FloatArray, y: FloatArray) -> FloatArray:
    """Row-wise Spearman correlation of two (B, n) matrices (average ranks for ties); NaN for a constant row."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    return out


@dataclass(frozen=True)
class InformationCoefficient:
    horizon_months: int
    vs_benchmark: bool
    use_conviction: bool
    n: int
    ic: float | None  # None when undefined (n < 3, or constant scores or returns)
    p_value: float | None  # scipy.stats.spearmanr's two-sided p-value (assumes independent outcomes)
    ci: BootstrapCI | None
    n_missing: int
    caveat: str


def information_coefficient(
    decisions: Sequence[Decision],
    horizon: int,
    *,
    use_conviction: bool = False,
    vs_benchmark: bool = False,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    alpha: float = 0.05,
) -> InformationCoefficient:
    """Spearman rank correlation of the rating score (× conviction if asked) with the return at ``horizon``."""
    from scipy.stats import spearmanr

    pairs = [
        (rating_score(d.rating, d.conviction if use_conviction else None), ret)
        for d in decisions
        if (ret := d.outcome(horizon, vs_benchmark)) is not None
    ]
    n, missing = len(pairs), len(decisions) - len(pairs)
    x = np.array([p[0] for p in pairs], dtype=np.float64)
    y = np.array([p[1] for p in pairs], dtype=np.float64)
    ic = p_value = ci = None
    if n >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        res = spearmanr(x, y)
        ic, p_value = float(res.statistic), float(res.pvalue)

        def stat(idx: IndexArray) -> FloatArray:
            return spearman_rows(x[idx], y[idx])

        ci = bootstrap_rows(n, ic, stat, n_resamples=n_resamples, seed=seed, alpha=alpha)
    overlap = windows_overlap(decisions, horizon)
    caveat = sample_caveat(n, ci, "decisions", 0.0, "0 (no rank correlation)", overlap)
    return InformationCoefficient(horizon, vs_benchmark, use_conviction, n, ic, p_value, ci, missing, caveat)


# ----------------------------------------------------------------------------------------------------------------
# Long-short portfolio


@dataclass(frozen=True)
class LongShortPeriod:
    decided_at: date
    n_long: int
    n_short: int
    long_return: float | None  # equal-weight mean of the long side; None when the side is empty
    short_return: float | None  # equal-weight mean return of the names shorted (the leg earns minus this)
    spread: float  # long_return - short_return, an empty side counting 0 (see module docstring)


def long_short_periods(
    decisions: Sequence[Decision], horizon: int, *, vs_benchmark: bool = False, require_both_sides: bool = False
) -> list[LongShortPeriod]:
    """One period per decision date that has at least one known outcome, in date order."""
    by_date: dict[date, list[tuple[int, float]]] = defaultdict(list)
    for d in decisions:
        ret = d.outcome(horizon, vs_benchmark)
        if ret is not None:
            by_date[d.decided_at].append((rating_side(d.rating), ret))
    periods: list[LongShortPeriod] = []
    for day in sorted(by_date):
        longs = [r for s, r in by_date[day] if s > 0]
        shorts = [r for s, r in by_date[day] if s < 0]
        long_ret = float(np.mean(longs)) if longs else None
        short_ret = float(np.mean(shorts)) if shorts else None
        spread = (long_ret or 0.0) - (short_ret or 0.0)
        if require_both_sides and not (longs and shorts):
            spread = 0.0
        periods.append(LongShortPeriod(day, len(longs), len(shorts), long_ret, short_ret, spread))
    return periods


@dataclass(frozen=True)
class LongShort:
    horizon_months: int
    vs_benchmark: bool
    require_both_sides: bool
    n_dates: int
    n_dates_one_sided: int  # dates with exactly one non-empty side
    mean_spread: float | None
    ci: BootstrapCI | None
    periods: tuple[LongShortPeriod, ...]
    caveat: str


def long_short(
    decisions: Sequence[Decision],
    horizon: int,
    *,
    vs_benchmark: bool = False,
    require_both_sides: bool = False,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    alpha: float = 0.05,
) -> LongShort:
    """Mean per-date long-short spread at ``horizon`` with a bootstrap CI over decision dates."""
    periods = long_short_periods(decisions, horizon, vs_benchmark=vs_benchmark, require_both_sides=require_both_sides)
    spreads = [p.spread for p in periods]
    ci = bootstrap_ci(spreads, n_resamples, seed, alpha) if spreads else None
    one_sided = sum(1 for p in periods if (p.n_long > 0) != (p.n_short > 0))
    overlap = windows_overlap(decisions, horizon)
    caveat = sample_caveat(len(periods), ci, "decision dates", 0.0, "0 (no spread)", overlap)
    mean = float(np.mean(spreads)) if spreads else None
    return LongShort(horizon, vs_benchmark, require_both_sides, len(periods), one_sided, mean, ci, (*periods,), caveat)


def summarise_backtest(
    decisions: Sequence[Decision],
    horizons: Sequence[int] = HORIZONS_MONTHS,
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """JSON-ready statistics per horizon: hit rate (raw and vs benchmark), IC (plain and × conviction), long-short."""
    kw: dict[str, Any] = {"n_resamples": n_resamples, "seed": seed, "alpha": alpha}
    out: dict[str, Any] = {"n_decisions": len(decisions), "horizons": {}}
    for h in horizons:
        out["horizons"][str(h)] = {
            "hit_rate": asdict(hit_rate(decisions, h, **kw)),
            "hit_rate_vs_benchmark": asdict(hit_rate(decisions, h, vs_benchmark=True, **kw)),
            "ic": asdict(information_coefficient(decisions, h, **kw)),
            "ic_conviction": asdict(information_coefficient(decisions, h, use_conviction=True, **kw)),
            "long_short": asdict(long_short(decisions, h, **kw)),
        }
    return out
