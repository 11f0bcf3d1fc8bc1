"""Does conviction mean something? Calibration of a backtest's directional decisions, per horizon.

Conviction (ADR 0003) is a strength of evidence in [0, 1], not a probability: 0 means no edge over a coin flip, 1
certainty. So it is read as the probability ``p = 0.5 + 0.5 × conviction`` that the rating's direction is right (a
BUY-side decision whose forward return is positive, a SELL-side one whose return is negative: ``stats.hit_rate``'s
hit). The literal reading ``p = conviction`` is reported beside it (``brier_literal``). Per horizon:

* **hit rate per conviction bucket** and **per rating level**, each with a Wilson score interval (exact enough for
  small n, unlike the normal approximation; ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``);
* **Brier score** of conviction against the hits, beside two no-skill baselines: always saying 0.5, and always
  saying the sample's own hit rate (climatology, ``p(1 − p)``); the **Brier skill score** is
  ``1 − Brier / climatology`` (> 0: conviction separates hits from misses better than a constant);
* **reliability**: each bucket's mean conviction against its observed hit rate (the plot's points);
* **monotone map** (``fit_monotone``): isotonic regression of hit on conviction fitted on the earlier half of the
  decision days and scored on the later half (Brier before and after), so a remap is adopted only on what it did to
  decisions it never saw;
* a **verdict** in words, which says plainly when the sample is too small to conclude (fewer than 30 scored
  decisions, or intervals that overlap the coin flip).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date
from itertools import pairwise
from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression
from scipy.stats import binomtest

from equimind.backtest.stats import Decision, rating_side

BUCKETS: tuple[tuple[float, float], ...] = ((0.0, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0001))
MIN_SAMPLE = 30  # below this many scored decisions nothing is concluded (the bootstrap rule in stats.sample_caveat)


@dataclass(frozen=True)
class Cell:
    """One row of a calibration table: decisions, hits, hit rate, its Wilson interval, mean conviction."""

    label: str
    n: int
    hits: int
    rate: float | None
    ci: tuple[float, float] | None
    mean_conviction: float | None


def wilson(hits: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    if n == 0:
        return None
    ci = binomtest(hits, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def _cell(label: str, convictions: Sequence[float], hits: Sequence[float]) -> Cell:
    n, k = len(hits), int(sum(hits))
    return Cell(label, n, k, (k / n) if n else None, wilson(k, n),
                float(np.mean(convictions)) if n else None)


def scored(decisions: Sequence[Decision], horizon: int) -> list[tuple[Decision, float]]:
    """The directional decisions with a known outcome at ``horizon``, each with its hit (1.0 or 0.0)."""
    out = []
    for d in decisions:
        side, ret = rating_side(d.rating), d.outcome(horizon)
        if side != 0 and ret is not None:
            out.append((d, float(ret * side > 0)))
    return out


def implied(conviction: float) -> float:
    """The probability of being right that a conviction states (see the module docstring)."""
    return 0.5 + 0.5 * conviction


def brier(p: Sequence[float], y: Sequence[float]) -> float | None:
    return float(np.mean((np.asarray(p) - np.asarray(y)) ** 2)) if len(y) else None


@dataclass(frozen=True)
class MonotoneMap:
    """Isotonic hit-on-conviction fitted on the earlier decision days, scored on the later ones."""

    split_day: date | None
    n_fit: int
    n_eval: int
    brier_eval_raw: float | None
    brier_eval_mapped: float | None
    knots: list[tuple[float, float]]  # (conviction, mapped probability) on the fit window
    adopt: bool
    reason: str


def fit_monotone(rows: Sequence[tuple[Decision, float]]) -> MonotoneMap:
    days = sorted({d.decided_at for d, _ in rows})
    if len(days) < 2:
        return MonotoneMap(None, 0, 0, None, None, [], False, "fewer than two decision days: nothing to split")
    split = days[len(days) // 2]
    fit = [(d.conviction, y) for d, y in rows if d.decided_at < split]
    ev = [(d.conviction, y) for d, y in rows if d.decided_at >= split]
    if len(fit) < 2 or not ev:
        return MonotoneMap(split, len(fit), len(ev), None, None, [], False, "too few decisions on one side of the "
                           "split to fit or to score a map")
    levels = sorted({c for c, _ in fit})  # one point per conviction value, weighted by its decisions
    xs = np.array(levels)
    counts = np.array([sum(1 for c, _ in fit if c == x) for x in levels], dtype=float)
    means = np.array([float(np.mean([y for c, y in fit if c == x])) for x in levels])
    ys = isotonic_regression(means, weights=counts, increasing=True).x
    mapped = np.interp([c for c, _ in ev], xs, ys)
    raw_b, map_b = brier([implied(c) for c, _ in ev], [y for _, y in ev]), brier(list(mapped), [y for _, y in ev])
    knots = sorted({(round(float(x), 4), round(float(v), 4)) for x, v in zip(xs, ys, strict=True)})
    better = raw_b is not None and map_b is not None and map_b < raw_b
    enough = len(fit) >= MIN_SAMPLE and len(ev) >= MIN_SAMPLE
    adopt = better and enough
    if not enough:
        reason = (f"not adopted: {len(fit)} decisions to fit and {len(ev)} to score; at least {MIN_SAMPLE} each are "
                  "needed before a remap of conviction can be trusted")
    elif not better:
        reason = f"not adopted: the map made the later window's Brier score worse ({map_b:.3f} vs {raw_b:.3f})"
    else:
        reason = f"the map lowers the later window's Brier score from {raw_b:.3f} to {map_b:.3f}"
    return MonotoneMap(split, len(fit), len(ev), raw_b, map_b, knots, adopt, reason)


def calibration_at(decisions: Sequence[Decision], horizon: int) -> dict[str, Any]:
    """The calibration block of one horizon (see the module docstring)."""
    rows = scored(decisions, horizon)
    conv = [d.conviction for d, _ in rows]
    hits = [y for _, y in rows]
    buckets = [_cell(f"{lo:.1f}-{min(hi, 1.0):.1f}", [c for c in conv if lo <= c < hi],
                     [y for c, y in zip(conv, hits, strict=True) if lo <= c < hi]) for lo, hi in BUCKETS]
    levels = sorted({d.rating.value for d, _ in rows})
    by_rating = [_cell(level, [d.conviction for d, _ in rows if d.rating.value == level],
                       [y for d, y in rows if d.rating.value == level]) for level in levels]
    overall = _cell("all", conv, hits)
    p = overall.rate
    b = brier([implied(c) for c in conv], hits)
    clim = None if p is None else p * (1 - p)
    skill = None if b is None or not clim else 1 - b / clim
    mono = fit_monotone(rows)
    return {
        "horizon_months": horizon, "n": len(rows), "overall": asdict(overall),
        "buckets": [asdict(c) for c in buckets], "by_rating": [asdict(c) for c in by_rating],
        "probability": "0.5 + 0.5 x conviction", "brier": b, "brier_literal": brier(conv, hits),
        "brier_coin_flip": None if b is None else 0.25, "brier_climatology": clim,
        "brier_skill": skill, "monotone_map": asdict(mono), "verdict": verdict(len(rows), buckets, skill),
    }


def verdict(n: int, buckets: Sequence[Cell], skill: float | None) -> str:
    """What the table allows one to say, in words."""
    if n == 0:
        return "n=0: no directional decision has a known outcome at this horizon; nothing can be concluded."
    filled = [c for c in buckets if c.n]
    parts = [f"n={n} directional decisions in {len(filled)} conviction bucket(s)"]
    if n < MIN_SAMPLE:
        parts.append(f"fewer than {MIN_SAMPLE}: too small to say whether conviction is calibrated")
    if len(filled) < 2:
        parts.append("conviction does not vary enough across buckets to test whether higher means right more often")
    else:
        rates = [c.rate for c in filled if c.rate is not None]
        rising = all(a <= b for a, b in pairwise(rates))
        disjoint = any(a.ci and b.ci and a.ci[1] < b.ci[0] for a in filled for b in filled)
        parts.append(("hit rate rises with conviction" if rising else "hit rate does not rise with conviction")
                     + ("" if disjoint else "; every pair of bucket intervals overlaps, so the ordering is not "
                        "established"))
    if skill is not None:
        parts.append(f"Brier skill {skill:+.3f} against always saying the sample's hit rate"
                     + (" (conviction adds nothing over a constant)" if skill <= 0 else ""))
    return "; ".join(parts) + "."


def calibration(decisions: Sequence[Decision], horizons: Sequence[int]) -> dict[str, Any]:
    """JSON-ready calibration per horizon (``BacktestReport.calibration``)."""
    return {str(h): calibration_at(decisions, h) for h in horizons}
