"""The market report: last close, indicators, point-in-time fundamentals, sentiment and macro for one ticker at one
as-of date, every number a ``models.Figure`` with provenance, and a ``Degradation`` for whatever could not be had.

``build_market_report`` computes the report from any implementation of the source Protocols; ``market_report``
computes it from one mode's ``MarketSources`` (``sources/sourceset.py``, chosen once by ``Services``): what
``equimind market`` calls.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import Any

from pydantic import BaseModel, Field

from equimind.analytics.fundamentals import compute_fundamentals, ev_to_sales, pe_ratio
from equimind.analytics.indicators import indicator_figures, unadjust_dividends
from equimind.analytics.inline_companyfacts import inline_company_facts
from equimind.analytics.inline_xbrl import inline_facts
from equimind.analytics.markets import MainMarkets, main_markets
from equimind.analytics.sentiment_report import SentimentBlock, build_sentiment
from equimind.core.config import Settings
from equimind.core.degraded import Degradation
from equimind.core.documents import Document, Origin
from equimind.core.errors import EquiMindError, NotFoundError
from equimind.core.research import Figure
from equimind.lexicon.lm_lists import Lexicon
from equimind.sources.base import (
    CompanyFacts,
    CompanyProfile,
    FactsSource,
    FilingIndexSource,
    NewsItem,
    NewsSource,
    PriceHistory,
    PriceSource,
    ProfileSource,
    normalise_ticker,
)
from equimind.sources.macro import MacroSource
from equimind.sources.sourceset import MarketSources, open_sources
from equimind.sources.to_documents import fundamentals_documents, news_documents, price_documents
from equimind.sources.web_intel import WebIntelSource

# Bump when the figures a market report holds change (a new figure, a changed formula): stored reports of another
# version are not reused (``store.figures.FigureCache`` scope). 2: margin trend, EV/sales, inline-XBRL fundamentals,
# same-form risk-factor change.
REPORT_VERSION = "2"

log = logging.getLogger(__name__)

DEFAULT_LOOKBACK_DAYS = 730
STALE_PRICE_DAYS = 7


class MarketReport(BaseModel):
    """What ``equimind market TICKER`` prints (JSON-serialisable)."""

    ticker: str
    company: str | None = None
    as_of: date
    mode: str  # "snapshot" | "live"
    last_close: Figure
    indicators: list[Figure] = Field(default_factory=list)
    fundamentals: list[Figure] = Field(default_factory=list)
    sentiment: SentimentBlock | None = None
    macro: list[Figure] = Field(default_factory=list)
    geography: list[Figure] = Field(default_factory=list)  # revenue share by country, from the 10-K's inline XBRL
    web: list[Figure] = Field(default_factory=list)  # job postings and GitHub activity (web intelligence)
    profile: dict[str, Any] = Field(default_factory=dict)
    degraded: list[Degradation] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)

    def figures(self) -> list[Figure]:
        """Every figure in the report, flat (what the research agents consume)."""
        sent = self.sentiment.figures if self.sentiment else []
        return [self.last_close, *self.indicators, *self.fundamentals, *sent, *self.macro, *self.geography,
                *self.web]

    def figure(self, fid: str) -> Figure | None:
        return next((f for f in self.figures() if f.id == fid), None)


def _last_close(full: PriceHistory, cut: PriceHistory) -> Figure:
    """The close as traded on the last bar <= as-of (dividend adjustment undone; on the series' split basis)."""
    raw = unadjust_dividends([b.close for b in full.bars], [b.dividend for b in full.bars])
    i = len(cut.bars) - 1
    bar = cut.bars[-1]
    return Figure(
        id="last_close", name="Last close on or before the as-of date", value=raw[i], unit="USD", as_of=bar.day,
        formula="close of the last bar dated <= as_of, dividend adjustment undone",
        inputs={"adjusted_close": bar.close, "bar_date": bar.day},
        provenance={"source": full.source.value, "origin": full.origin.value, "location": full.location,
                    "bar_date": bar.day, "split_basis_day": full.last_day,
                    "adjustment": "as traded, restated to the share basis after all splits up to split_basis_day"},
    )


def _fetch_prices(prices: PriceSource, ticker: str, as_of: date, lookback_days: int) -> tuple[PriceHistory,
                                                                                            PriceHistory]:
    start = as_of - timedelta(days=lookback_days)
    full = prices.history(ticker, start=start)  # to the latest bar: the split basis of the adjusted series
    cut = full.up_to(as_of)
    if not cut.bars:
        first = full.first_day
        raise NotFoundError(
            f"no price bars for {ticker} on or before {as_of}"
            + (f"; the data starts {first}: choose a later --as-of" if first else "")
        )
    return full, cut


def build_market_report(
    settings: Settings, ticker: str, as_of: date, *, prices: PriceSource, facts: FactsSource | None,
    news: NewsSource | None = None, macro: MacroSource | None = None, filings: FilingIndexSource | None = None,
    profile: ProfileSource | None = None, lexicon: Lexicon | None = None,
    web: Sequence[WebIntelSource] = (),
    lookback_days: int = DEFAULT_LOOKBACK_DAYS, unavailable: Sequence[Degradation] = (),
    on_documents: Callable[[list[Document]], None] | None = None, mode: Origin,
) -> MarketReport:
    """The market report of ``ticker`` as of ``as_of``: nothing dated after ``as_of`` enters any figure.

    Raises NotFoundError when there is no price bar on or before ``as_of``. ``on_documents`` receives the Documents
    of everything fetched (prices, fundamentals, news), each dated by its own data, for ingestion.
    ``mode`` is the sources' mode (what the report says it was computed from)."""
    t0 = time.perf_counter()
    t = normalise_ticker(ticker)
    timings: dict[str, float] = {}
    degraded = list(unavailable)
    full, cut = _fetch_prices(prices, t, as_of, lookback_days)
    timings["prices"] = _ms(t0)
    prof = _profile(profile, t, degraded)
    company = prof.name if prof else None
    indicators, deg = indicator_figures(cut)
    degraded += deg
    last = _last_close(full, cut)
    if last.as_of and (as_of - last.as_of).days > STALE_PRICE_DAYS:
        degraded.append(Degradation(capability="prices", reason=f"last bar {last.as_of} is "
                                    f"{(as_of - last.as_of).days} days before the as-of date {as_of}"))
    docs = price_documents(full, company=company)
    t1 = time.perf_counter()
    fundamentals = _fundamentals(facts, t, as_of, full, last, degraded, docs, lookback_days, filings)
    timings["fundamentals"] = _ms(t1)
    items = _news(news, t, as_of, degraded)
    docs += news_documents(items, company=company)
    t2 = time.perf_counter()
    sentiment = build_sentiment(t, as_of, items, filings, lexicon, degraded)
    timings["sentiment"] = _ms(t2)
    t3 = time.perf_counter()
    markets = _main_markets(filings, t, as_of, degraded)
    timings["geography"] = _ms(t3)
    macro_figs = _macro(macro, as_of, degraded, markets.codes)
    t4 = time.perf_counter()
    web_figs = _web(web, t, as_of, degraded)
    timings["web"] = _ms(t4)
    if on_documents is not None:
        on_documents(docs)
    timings["total"] = _ms(t0)
    return MarketReport(ticker=t, company=company, as_of=as_of, mode=mode.value, last_close=last,
                        indicators=indicators, fundamentals=fundamentals, sentiment=sentiment, macro=macro_figs,
                        geography=list(markets.figures), web=web_figs,
                        profile=dict(prof.fields) if prof else {}, degraded=degraded, timings_ms=timings)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


def _profile(src: ProfileSource | None, ticker: str, degraded: list[Degradation]) -> CompanyProfile | None:
    if src is None:
        return None
    try:
        return src.profile(ticker)
    except EquiMindError as e:
        degraded.append(Degradation(capability="profile", reason=f"unavailable ({e})"))
        return None


def _fundamentals(facts: FactsSource | None, ticker: str, as_of: date, full: PriceHistory, last: Figure,
                  degraded: list[Degradation], docs: list[Document], lookback_days: int,
                  filings: FilingIndexSource | None = None) -> list[Figure]:
    if facts is None:
        return []
    try:
        cf = facts.company_facts(ticker)
    except EquiMindError as e:
        fallback = _inline_fundamentals(filings, ticker, as_of, e, degraded)
        if fallback is None:
            return []
        cf = fallback
    docs += fundamentals_documents(cf, since=as_of - timedelta(days=lookback_days))
    res = compute_fundamentals(cf, as_of, splits=full.splits())
    degraded += res.degraded
    out = list(res.figures)  # *_prior figures stay: growth and ratio figures name them as inputs
    eps = res.values.get("eps_diluted_ttm")
    if eps is not None and last.value is not None and last.as_of is not None:
        out.append(pe_ratio(eps, last.value, last.as_of, as_of, full.last_day, full.splits(),
                            price_provenance=dict(last.provenance)))
    else:
        degraded.append(Degradation(capability="fundamentals.pe_ttm", reason="needs eps_diluted_ttm"))
    if last.value is not None and last.as_of is not None:
        evs = ev_to_sales(res, last.value, last.as_of, as_of, full.last_day, full.splits(),
                          price_provenance=dict(last.provenance))
        if evs is not None:
            out.append(evs)
        else:
            lacking = [k for k in ("shares_diluted_quarter", "revenue_ttm") if k not in res.values] or [
                "revenue_ttm > 0"]
            degraded.append(Degradation(capability="fundamentals.ev_to_sales_ttm",
                                        reason=f"needs {' and '.join(lacking)}"))
    return out


def _inline_fundamentals(filings: FilingIndexSource | None, ticker: str, as_of: date, error: EquiMindError,
                         degraded: list[Degradation]) -> CompanyFacts | None:
    """Companyfacts failed with ``error``: the facts of the company's own 10-K / 10-Q inline XBRL filed by
    ``as_of`` (``inline_companyfacts``), said so in a visible degradation; None (and today's line) without them."""
    if filings is None:
        tried = "no filing source to read the 10-K / 10-Q inline XBRL from"
    else:
        try:
            res = inline_company_facts(filings, ticker, as_of)
        except EquiMindError as e:
            tried = f"the 10-K / 10-Q list is unavailable too ({e})"
        else:
            if res.facts is not None:
                n = len(res.used)
                skipped = f"; not read: {res.describe_skipped()}" if res.skipped else ""
                degraded.append(Degradation(capability="fundamentals.source", reason=(
                    f"companyfacts not available ({error}); fundamentals computed from the inline XBRL of {n} "
                    f"filing{'s' if n != 1 else ''}: {res.describe_used()}{skipped}")))
                return res.facts
            tried = res.describe_tried(ticker, as_of)
    degraded.append(Degradation(capability="fundamentals", reason=f"unavailable ({error}); inline XBRL fallback: "
                                f"{tried}"))
    return None


def _news(src: NewsSource | None, ticker: str, as_of: date, degraded: list[Degradation]) -> list[NewsItem]:
    if src is None:
        return []
    try:
        return src.news(ticker, until=as_of)
    except EquiMindError as e:
        degraded.append(Degradation(capability="news", reason=f"unavailable ({e})"))
        return []


def _macro(client: MacroSource | None, as_of: date, degraded: list[Degradation],
           markets: Sequence[str]) -> list[Figure]:
    if client is None:
        return []
    res = client.report(as_of, markets=tuple(markets))
    degraded += res.degraded
    return list(res.figures)


def _main_markets(filings: FilingIndexSource | None, ticker: str, as_of: date,
                  degraded: list[Degradation]) -> MainMarkets:
    """The main markets of the company's latest 10-K filed on or before ``as_of`` (its inline XBRL)."""
    none = MainMarkets((), (), ())
    if filings is None:
        return none
    try:
        refs = filings.filings(ticker, forms=("10-K",), until=as_of)
        if not refs:
            degraded.append(Degradation(capability="geography", reason=f"no 10-K of {ticker} filed by {as_of}; the "
                                        "macro panel's World Bank figures are for the US only"))
            return none
        ref = refs[0]
        html = filings.primary_document(ref)
    except EquiMindError as e:
        degraded.append(Degradation(capability="geography", reason=f"unavailable ({e}); World Bank figures are for "
                                    "the US only"))
        return none
    source = {"source": "sec_edgar", "origin": ref.origin.value, "accession": ref.accession, "form": ref.form,
              "filed": ref.filed, "location": ref.url or ref.local_path}
    res = main_markets(inline_facts(html), source=source, filed=ref.filed)
    if not res.codes:
        degraded.append(Degradation(capability="geography", reason=f"no main market found in {ref.form} "
                                    f"{ref.accession} ({'; '.join(res.notes[:2]) or 'no country over 10 %'}); World "
                                    "Bank figures are for the US only"))
    return res


def _web(sources: Sequence[WebIntelSource], ticker: str, as_of: date, degraded: list[Degradation]) -> list[Figure]:
    out: list[Figure] = []
    for src in sources:
        res = src.report(ticker, as_of)
        out += res.figures
        degraded += res.degraded
    return out


def market_report(settings: Settings, ticker: str, as_of: date, sources: MarketSources, *,
                  on_documents: Callable[[list[Document]], None] | None = None,
                  lookback_days: int = DEFAULT_LOOKBACK_DAYS) -> MarketReport:
    """``build_market_report`` over one mode's sources: the one call behind ``equimind market``."""
    return build_market_report(
        settings, ticker, as_of, prices=sources.prices, facts=sources.facts, news=sources.news, macro=sources.macro,
        filings=sources.filings, profile=sources.profile, lexicon=sources.lexicon, web=sources.web,
        lookback_days=lookback_days, unavailable=sources.unavailable, on_documents=on_documents, mode=sources.mode)


def report_for(settings: Settings, ticker: str, as_of: date, **kwargs: Any) -> MarketReport:
    """The market report over a SourceSet opened for ``settings`` and closed after (the CLI's ``market``, which
    needs no store)."""
    sources = open_sources(settings)
    try:
        return market_report(settings, ticker, as_of, sources.market, **kwargs)
    finally:
        sources.close()
