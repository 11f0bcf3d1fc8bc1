"""The backtest's boundary types (Pydantic): the request the CLI and API take and the report they print."""

from __future__ import annotations

import re
import string
from datetime import date, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from equimind.backtest.stats import HORIZONS_MONTHS, add_months
from equimind.core.degraded import DegradationNote
from equimind.core.research import Rating

DEFAULT_QUESTION = "Should I invest in {company} ({ticker})?"
MAX_DECISIONS = 400
EARLIEST, LATEST = date(1970, 1, 1), date(2099, 12, 31)  # a schedule step past LATEST stays a valid date
_TICKER = re.compile(r"^[A-Z][A-Z0-9.\-]{0,9}$")


CLOSE_EQUALS = "equals research's last_close figure"  # DecisionRecord.close_check when the closes agree


class Frequency(StrEnum):
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    QUARTERLY = "quarterly"


def decision_dates(start: date, end: date, frequency: Frequency) -> list[date]:
    """``start``, then every week / calendar month / quarter after it (day clipped to the month's end), up to
    ``end`` inclusive. Anchored on ``start`` so the schedule never drifts (Jan 31 -> Feb 28 -> Mar 31)."""
    out: list[date] = []
    k = 0
    while (d := step(start, frequency, k)) <= end:
        out.append(d)
        k += 1
    return out


def step(start: date, frequency: Frequency, k: int) -> date:
    if frequency is Frequency.WEEKLY:
        return start + timedelta(weeks=k)
    return add_months(start, k * (3 if frequency is Frequency.QUARTERLY else 1))


class BacktestRequest(BaseModel):
    """What to backtest. Unknown fields are rejected (a misspelt option is an error, not a silent default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tickers: list[str] = Field(min_length=1, max_length=20, description="The universe, e.g. [\"AAPL\", \"NVDA\"].")
    start: date = Field(ge=EARLIEST, le=LATEST, description="First decision day (YYYY-MM-DD).")
    end: date = Field(ge=EARLIEST, le=LATEST, description="Last possible decision day (YYYY-MM-DD), inclusive.")
    frequency: Frequency = Frequency.MONTHLY
    horizons: list[int] = Field(default_factory=lambda: list(HORIZONS_MONTHS), min_length=1, max_length=6,
                                description="Forward horizons in calendar months.")
    question: str = Field(default=DEFAULT_QUESTION, min_length=1, max_length=300,
                          description="Question template; may use {ticker} and {company}.")
    prime_figures: bool = Field(default=True, description="Compute each decision's market report (as of its day) "
                                "before the research, so every decision has figures (see docs).")
    n_resamples: int = Field(default=10_000, ge=200, le=100_000, description="Bootstrap resamples per CI.")
    seed: int = Field(default=0, ge=0, description="Bootstrap seed (the statistics are reproducible).")

    @field_validator("tickers")
    @classmethod
    def _tickers(cls, v: list[str]) -> list[str]:
        out = [t.strip().upper() for t in v]
        bad = [t for t in out if not _TICKER.match(t)]
        if bad:
            raise ValueError(f"not ticker symbols: {bad}; use symbols like NVDA")
        if len(set(out)) != len(out):
            raise ValueError("a ticker is listed twice; list each once")
        return out

    @field_validator("horizons")
    @classmethod
    def _horizons(cls, v: list[int]) -> list[int]:
        if any(not 1 <= h <= 24 for h in v) or len(set(v)) != len(v):
            raise ValueError("horizons must be distinct whole months between 1 and 24")
        return sorted(v)

    @field_validator("question")
    @classmethod
    def _template(cls, v: str) -> str:
        names = {f for _, f, _, _ in string.Formatter().parse(v) if f is not None}
        if names - {"ticker", "company"}:
            raise ValueError(f"the question template may only use {{ticker}} and {{company}}, not {sorted(names)}")
        try:
            v.format(ticker="NVDA", company="NVIDIA CORP")
        except (ValueError, IndexError, KeyError) as exc:
            raise ValueError(f"the question template does not format ({exc}); write e.g. "
                             "\"Should I invest in {company} ({ticker})?\"") from exc
        return v

    @model_validator(mode="after")
    def _window(self) -> BacktestRequest:
        if self.start > self.end:
            raise ValueError(f"start ({self.start}) is after end ({self.end}); swap them")
        n = len(decision_dates(self.start, self.end, self.frequency)) * len(self.tickers)
        if n > MAX_DECISIONS:
            raise ValueError(f"{n} decisions requested, at most {MAX_DECISIONS}; use fewer tickers, a shorter "
                             "window or a lower frequency")
        return self

    def schedule(self) -> list[date]:
        return decision_dates(self.start, self.end, self.frequency)


class DecisionRecord(BaseModel):
    """One decision: what research said on the day, the real close that day, and what happened after."""

    ticker: str
    decided_at: date
    question: str
    rating: Rating | None  # None: research refused (left out of the statistics, counted in n_refused)
    conviction: float
    refusal_reason: str | None = None
    close: float  # as traded on close_bar_date (see equimind.backtest.score)
    close_bar_date: date
    close_check: str  # how the close compares with research's own last_close figure (CLOSE_EQUALS when equal)
    forward_returns: dict[int, float | None]  # buy-and-hold of the ticker, total return
    benchmark_returns: dict[int, float | None]  # equal-weight universe
    position_returns: dict[int, float | None]  # side x forward return (HOLD = 0, refused = None)
    n_bull_claims: int
    n_bear_claims: int
    n_figures: int
    degraded: list[DegradationNote] = Field(default_factory=list)
    digest: str  # sha256 of the decision (rating, conviction, thesis, claims, judge, figures)
    duration_s: float


class HorizonRow(BaseModel):
    """One line of the report's table."""

    horizon_months: int
    n_scored: int  # rated decisions with a known outcome
    n_pending: int  # rated decisions whose window runs past the data
    n_directional: int  # BUY/SELL-side decisions with a known outcome (what the hit rate counts)
    hit_rate: float | None
    hit_rate_ci: tuple[float, float] | None
    base_rate_up: float | None
    hit_rate_vs_benchmark: float | None
    ic: float | None
    ic_ci: tuple[float, float] | None
    ic_p_value: float | None
    ic_conviction: float | None
    long_short_mean: float | None
    long_short_ci: tuple[float, float] | None
    n_dates: int
    mean_position_return: float | None
    mean_buy_and_hold: float | None
    mean_benchmark: float | None
    caveats: list[str]


class EquityPointOut(BaseModel):
    day: date
    ratings: float
    long_short: float
    benchmark: float
    tickers: dict[str, float]


class BacktestReport(BaseModel):
    """What ``equimind backtest`` and ``POST /api/v1/backtest`` return."""

    run_id: str
    created_at: str
    request: BacktestRequest
    snapshot: str
    data_end: date  # last price bar of the universe (outcomes after it are unknown)
    schedule: list[date]
    n_decisions: int
    n_rated: int
    n_refused: int
    decisions: list[DecisionRecord]
    table: list[HorizonRow]
    statistics: dict[str, Any]  # equimind.backtest.stats.summarise_backtest, in full
    equity_curve: list[EquityPointOut]
    calibration: dict[str, Any] = Field(default_factory=dict)  # backtest.calibration, per horizon (empty: older run)
    plot_path: str | None = None
    calibration_plot_path: str | None = None
    report_path: str | None = None
    caveats: list[str]
    omitted_from_views: list[str] = Field(default_factory=list)
    timings_s: dict[str, float] = Field(default_factory=dict)
