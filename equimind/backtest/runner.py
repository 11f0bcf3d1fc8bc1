"""Walk-forward backtesting without look-ahead.

For each decision day of a schedule (chronological) and each ticker of a universe, ``Backtester.run`` runs the full
research with ``as_of`` = that day and records the rating, the conviction and the real close on that day; then it
scores forward returns at the requested horizons (1, 3, 6 months by default) against buy-and-hold of the ticker and
an equal-weight benchmark of the universe, computes hit rate, information coefficient and the long-short spread with
bootstrap CIs (``equimind.backtest.stats``), stores everything in the accuracy tracker
(``EQUIMIND_HOME/backtest.sqlite``), and draws the equity curves.

How look-ahead is excluded, by construction rather than by care:
* every decision reads a point-in-time view of the recorded corpus (``equimind.backtest.pit``): prices cut at the
  day and adjusted as of it, facts and filings filed by the day, nothing else;
* every ticker gets its own fresh research store for the run (``<home>/backtest/runs/<run_id>/<TICKER>``), filled
  only by that ticker's own decisions in date order, so a decision never sees a document fetched for a later day or
  for another ticker (not even through index-wide statistics such as BM25 document frequencies);
* prices after a decision day are read only by the scoring step, after all decisions are made.
A decision therefore depends on its day, its ticker, the settings, and that ticker's earlier decisions in the run
(DB-first: what they fetched stays in the store); re-running the same request reproduces it.

Only snapshot mode is supported: live sources serve today's adjusted prices and filings lists, which cannot be cut
back to a past day.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.analytics.market import market_report
from equimind.app.engine import EquiMindEngine
from equimind.app.services import Services, open_services
from equimind.backtest.calibration import calibration
from equimind.backtest.models import CLOSE_EQUALS, BacktestReport, BacktestRequest, DecisionRecord, EquityPointOut, step
from equimind.backtest.pit import PointInTimeCorpus, PointInTimeView
from equimind.backtest.plot import markdown_report, plot_equity, plot_reliability
from equimind.backtest.report import build_caveats, build_table
from equimind.backtest.score import (
    benchmark_returns,
    equity_curve,
    score_forward,
    traded_close,
)
from equimind.backtest.stats import Decision, rating_side, summarise_backtest
from equimind.backtest.store import BacktestStore, Prediction
from equimind.core.config import Settings
from equimind.core.errors import ConfigError, EquiMindError
from equimind.sources.market_snapshot import SnapshotPrices, SnapshotSec

if TYPE_CHECKING:
    from equimind.core.protocols import Embedder, Reranker, Tokenizer
    from equimind.core.research import Recommendation
    from equimind.sources.base import PriceHistory

__all__ = ["BacktestReport", "BacktestRequest", "Backtester", "decision_digest"]

log = logging.getLogger(__name__)

Progress = Callable[[str], None]
_DIGEST_FIELDS = ("rating", "conviction", "refused", "refusal_reason", "thesis", "bull_case", "bear_case", "judge",
                  "figures", "dropped_claims")


def decision_digest(rec: Recommendation, view_path: Path | None = None) -> str:
    """sha256 of what was decided (rating, conviction, thesis, claims with citations, judge, figures).

    Paths inside the point-in-time view (figure provenance) are written relative to it, so the same decision made
    from two copies of the same data has the same digest."""
    text = json.dumps(rec.model_dump(mode="json", include=set(_DIGEST_FIELDS)), sort_keys=True)
    if view_path is not None:
        text = text.replace(json.dumps(str(view_path))[1:-1], "<view>")
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Run:
    request: BacktestRequest
    run_id: str
    home: Path
    histories: dict[str, PriceHistory]
    services: dict[str, Services] = field(default_factory=dict)
    records: list[DecisionRecord] = field(default_factory=list)
    omitted: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=dict)


class Backtester:
    """Runs walk-forward backtests over a recorded corpus (``settings.snapshot``)."""

    def __init__(self, settings: Settings, *, embedder: Embedder | None = None, reranker: Reranker | None = None,
                 tokenizer: Tokenizer | None = None, store: BacktestStore | None = None,
                 out_dir: Path | None = None, keep_stores: bool = False, plot: bool = True) -> None:
        if settings.snapshot is None:
            raise ConfigError("backtests run on a recorded corpus only: pass --snapshot (e.g. ../shared/corpus); "
                              "live sources cannot be cut back to a past day")
        self.settings = settings
        self.snapshot = Path(settings.snapshot)
        self.pit: PointInTimeCorpus = PointInTimeCorpus(self.snapshot, settings.home / "backtest" / "pit")
        self.store = store if store is not None else BacktestStore.from_settings(settings)
        self.out_dir = out_dir if out_dir is not None else settings.home / "backtest" / "reports"
        self.keep_stores = keep_stores
        self.plot = plot
        self._embedder, self._reranker, self._tokenizer = embedder, reranker, tokenizer

    @classmethod
    def from_services(cls, services: Services, **kwargs: Any) -> Backtester:
        """A backtester sharing the models (embedder, reranker, tokenizer) of already-open services."""
        return cls(services.settings, embedder=services.embedder, reranker=services.reranker,
                   tokenizer=services.tokenizer, **kwargs)

    # ------------------------------------------------------------------------------------------------------------
    def run(self, request: BacktestRequest, on_progress: Progress | None = None) -> BacktestReport:
        t0 = time.perf_counter()
        run_id = f"bt-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        ctx = _Run(request, run_id, self.settings.home / "backtest" / "runs" / run_id, self._histories(request))
        self.store.start_run(run_id, {**request.model_dump(mode="json"), "snapshot": str(self.snapshot),
                                      "provider": self.settings.provider, "model": self.settings.model,
                                      "retrieval_mode": self.settings.retrieval_mode})
        try:
            self._decide_all(ctx, on_progress)
            ctx.timings["decisions"] = round(time.perf_counter() - t0, 2)
            report = self._report(ctx)
        except BaseException:
            self.store.finish_run(run_id, None, status="failed")
            raise
        finally:
            self._close(ctx)
        report.timings_s = {**ctx.timings, "total": round(time.perf_counter() - t0, 2)}
        self._write_outputs(report)
        self.store.finish_run(run_id, report.model_dump_json())
        return report

    def _histories(self, request: BacktestRequest) -> dict[str, PriceHistory]:
        """Full recorded price histories (read only for scoring), checked before any research runs."""
        sec = SnapshotSec(self.snapshot)
        for t in request.tickers:
            sec.resolve(t)  # an unknown symbol fails here, not after minutes of research
        prices = SnapshotPrices(self.snapshot)
        out = {t: prices.history(t) for t in request.tickers}
        for h in out.values():
            traded_close(h, request.start)  # raises NotFoundError naming the first bar when the data starts later
        data_end = min(h.last_day for h in out.values() if h.last_day is not None)
        if request.end > data_end:
            raise ConfigError(f"the recorded prices of {', '.join(request.tickers)} end {data_end}: a decision after "
                              f"that has no price and no outcome; choose an end on or before {data_end}")
        return out

    def _decide_all(self, ctx: _Run, on_progress: Progress | None) -> None:
        schedule = ctx.request.schedule()
        total, k = len(schedule) * len(ctx.request.tickers), 0
        for day in schedule:
            view = self.pit.view(day)
            ctx.omitted.update(view.omitted)
            for ticker in ctx.request.tickers:
                k += 1
                rec = self._decide(ctx, ticker, day, view)
                if on_progress is not None:
                    rating = rec.rating.value if rec.rating else "REFUSED"
                    on_progress(f"[{k}/{total}] {ticker} {day}: {rating} conviction {rec.conviction:.2f} "
                                f"close {rec.close:.2f} ({rec.duration_s:.1f} s)")

    def _services(self, ctx: _Run, ticker: str) -> Services:
        if ticker not in ctx.services:
            # a decision is a function of the data at its date, not of what an earlier one left unembedded
            s = self.settings.model_copy(update={"home": ctx.home / ticker, "first_answer_indexing": False})
            svc = open_services(s, embedder=self._embedder, reranker=self._reranker, tokenizer=self._tokenizer)
            self._embedder, self._reranker, self._tokenizer = svc.embedder, svc.reranker, svc.tokenizer
            ctx.services[ticker] = svc
        return ctx.services[ticker]

    def _decide(self, ctx: _Run, ticker: str, day: date, view: PointInTimeView) -> DecisionRecord:
        svc = self._services(ctx, ticker)
        view_svc = svc.with_settings(svc.settings.model_copy(update={"snapshot": view.path}))
        question = ctx.request.question.format(ticker=ticker, company=_company(view.path, ticker))
        t0 = time.perf_counter()
        if ctx.request.prime_figures:
            _prime_figures(view_svc, ticker, day)
        rec = EquiMindEngine(view_svc).research(ticker, question, day)
        view_svc.release_sources()
        duration = round(time.perf_counter() - t0, 2)
        close = traded_close(ctx.histories[ticker], day)
        record = DecisionRecord(
            ticker=ticker, decided_at=day, question=question, rating=None if rec.refused else rec.rating,
            conviction=rec.conviction, refusal_reason=rec.refusal_reason, close=close.value,
            close_bar_date=close.bar_day, close_check=_close_check(rec, close.value), forward_returns={},
            benchmark_returns={}, position_returns={}, n_bull_claims=len(rec.bull_case),
            n_bear_claims=len(rec.bear_case), n_figures=len(rec.figures),
            degraded=list(rec.degraded),
            digest=decision_digest(rec, view.path), duration_s=duration)
        ctx.records.append(record)
        self.store.add_prediction(Prediction(
            ctx.run_id, ticker, day, question, record.rating, rec.conviction, close.value, close.bar_day,
            record.digest, rec.model_dump_json(), duration))
        return record

    # ------------------------------------------------------------------------------------------------------------
    def _report(self, ctx: _Run) -> BacktestReport:
        t0 = time.perf_counter()
        req = ctx.request
        schedule = req.schedule()
        self._score(ctx)
        decisions = [Decision(r.ticker, r.decided_at, r.rating, r.conviction, r.close, r.forward_returns,
                              r.benchmark_returns) for r in ctx.records if r.rating is not None]
        stats = summarise_backtest(decisions, req.horizons, n_resamples=req.n_resamples, seed=req.seed)
        curve = equity_curve(decisions, ctx.histories, schedule, step(req.start, req.frequency, len(schedule)))
        data_end = min(h.last_day for h in ctx.histories.values() if h.last_day is not None)
        ctx.timings["scoring"] = round(time.perf_counter() - t0, 2)
        return BacktestReport(
            run_id=ctx.run_id, created_at=datetime.now(UTC).isoformat(timespec="seconds"), request=req,
            snapshot=str(self.snapshot), data_end=data_end, schedule=schedule, n_decisions=len(ctx.records),
            n_rated=len(decisions), n_refused=len(ctx.records) - len(decisions), decisions=ctx.records,
            table=build_table(stats, ctx.records, req.horizons), statistics=stats,
            calibration=calibration(decisions, req.horizons),
            equity_curve=[EquityPointOut(day=p.day, ratings=p.ratings, long_short=p.long_short,
                                         benchmark=p.benchmark, tickers=p.tickers) for p in curve],
            caveats=build_caveats(ctx.records, req, data_end), omitted_from_views=sorted(ctx.omitted))

    def _score(self, ctx: _Run) -> None:
        """Forward returns, the equal-weight benchmark and position returns; stored as outcomes."""
        hs = ctx.request.horizons
        scored_through = min(h.last_day for h in ctx.histories.values() if h.last_day is not None)
        for day in ctx.request.schedule():
            forward = {t: score_forward(ctx.histories, t, day, hs) for t in ctx.request.tickers}
            bench = benchmark_returns(forward, hs)
            for i, r in enumerate(ctx.records):
                if r.decided_at != day:
                    continue
                fwd = forward[r.ticker]
                side = rating_side(r.rating) if r.rating is not None else None
                pos = {h: None if side is None or v is None else side * v for h, v in fwd.items()}
                ctx.records[i] = r.model_copy(update={"forward_returns": fwd, "benchmark_returns": bench,
                                                      "position_returns": pos})
                self.store.set_outcomes(ctx.run_id, r.ticker, day, fwd, bench, scored_through)

    def _write_outputs(self, report: BacktestReport) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if self.plot:
            report.plot_path = str(plot_equity(report, self.out_dir / f"{report.run_id}.png"))
            report.calibration_plot_path = str(plot_reliability(report, self.out_dir /
                                                                f"{report.run_id}-reliability.png"))
        md = self.out_dir / f"{report.run_id}.md"
        report.report_path = str(md)
        md.write_text(markdown_report(report), encoding="utf-8")
        (self.out_dir / f"{report.run_id}.json").write_text(report.model_dump_json(indent=1), encoding="utf-8")

    def _close(self, ctx: _Run) -> None:
        for svc in ctx.services.values():
            svc.docstore.close()
        if not self.keep_stores:
            shutil.rmtree(ctx.home, ignore_errors=True)


# ----------------------------------------------------------------------------------------------------------------


def _company(view: Path, ticker: str) -> str:
    """The company name the recorded SEC data gives (what the question template's {company} becomes)."""
    try:
        return SnapshotSec(view).profile(ticker).name or ticker
    except EquiMindError as exc:
        log.warning("no company name for %s (%s); the question uses the ticker", ticker, exc)
        return ticker


def _prime_figures(services: Services, ticker: str, day: date) -> None:
    """Compute the market report as of ``day`` from the point-in-time view and put it in the research store's figure
    cache, where research reads it (DB-first figures). Without this, only a ticker's first decision would get
    figures: later ones find the filings stored, converge without fetching prices, and have no figures at all."""
    report = market_report(services.settings, ticker, day, services.sources.market)
    services.figure_cache.put(ticker, day, report.mode, report.model_dump_json())


def _close_check(rec: Recommendation, close: float) -> str:
    fig = next((f for f in rec.figures if f.id == "last_close"), None)
    if fig is None or fig.value is None:
        return "research had no last_close figure; the close is computed from the recorded prices"
    if abs(fig.value - close) <= 1e-6 * max(1.0, abs(close)):
        return CLOSE_EQUALS
    return f"DIFFERS from research's last_close figure ({fig.value:.6f}); the recorded prices' value is used"
