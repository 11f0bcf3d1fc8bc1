"""On-demand fetch for a research run: exactly the data kinds the critic said are missing, dated on or before as-of.

Each fetch returns a ``FetchRecord`` (kind, why, outcome, documents) and ingests what it got, so the next round and
the next run find it in the store (DB-first). Failures are recorded and shown in ``degraded``; nothing is invented.
The fetcher is given the docstore, the ingest pipeline and the run's one ``SourceSet``; it never picks a source.
Filings arrive as raw records and are parsed by ``ingest.documents``: a filing that cannot be downloaded or parsed
is recorded in ``degraded`` and the other filings of the kind still count.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import date
from typing import Any

from equimind.analytics.market import MarketReport, build_market_report
from equimind.core.documents import Document, FilterSpec
from equimind.core.errors import EquiMindError, NotFoundError
from equimind.core.timeguard import filter_dated
from equimind.ingest.documents import documents
from equimind.ingest.first_answer import FirstAnswerRule
from equimind.ingest.pipeline import IngestPipeline
from equimind.research.state import FetchRecord, Ingested, RunState
from equimind.sources.sourceset import SourceSet
from equimind.sources.to_documents import news_documents
from equimind.store.docstore import DocStore

FILINGS_PER_KIND = {"10-K": 1, "10-Q": 1, "8-K": 3}
# A stored filing younger than this (days before as-of) is current: a newer one cannot exist yet, so no fetch.
FRESH_DAYS = {"10-K": 370, "10-Q": 100, "8-K": 0}
RECENT_8K_DAYS = 120

ReportSink = Callable[[MarketReport], None]


class Fetcher:
    def __init__(self, docstore: DocStore, pipeline: Callable[[], IngestPipeline], sources: SourceSet,
                 state: RunState, *, ticker: str, as_of: date, settings: Any, on_report: ReportSink) -> None:
        self.docstore = docstore
        self._pipeline = pipeline
        self.sources = sources
        self.state = state
        self.ticker = ticker
        self.as_of = as_of
        self.settings = settings
        self._on_report = on_report

    def fetch(self, kind: str, why: str) -> FetchRecord:
        t0 = time.perf_counter()
        result: Ingested | None = None
        outcome = ""
        try:
            if kind in FILINGS_PER_KIND:
                result = self._filings(kind)
            elif kind in ("prices", "companyfacts", "web"):  # the market report computes all three together
                result = self._market()
            elif kind == "news":
                result = self._news()
            else:
                outcome = f"skipped: no source for data kind {kind!r}"
        except EquiMindError as exc:
            result, outcome = None, f"failed: {exc}"
            self.state.degraded.add(kind, f"fetch failed ({exc})")
        return FetchRecord(kind, why, self.sources.mode.value, result, outcome,
                           round((time.perf_counter() - t0) * 1000, 1))

    # --- filings ------------------------------------------------------------------------------------------------
    def _filings(self, kind: str) -> Ingested:
        fresh = self._fresh_stored(kind)
        if fresh is not None:
            return Ingested.nothing(f"not fetched: stored {kind} filed {fresh} is current as of {self.as_of} "
                                    f"(a newer one is not due within {FRESH_DAYS[kind]} days)")
        docs = filter_dated(list(self._filing_documents(kind)), self.as_of)
        docs.sort(key=lambda d: d.filed_at or self.as_of, reverse=True)
        if kind == "8-K":
            docs = [d for d in docs if d.filed_at and (self.as_of - d.filed_at).days <= RECENT_8K_DAYS]
        docs = docs[:FILINGS_PER_KIND[kind]]
        if not docs:
            return Ingested.nothing(f"none available: no {kind} for {self.ticker} filed on or before "
                                    f"{self.as_of} in the {self.sources.mode.value} source")
        return self._ingest(docs)

    def _fresh_stored(self, kind: str) -> date | None:
        """Filing date of the newest stored ``kind`` for the ticker when it is still current, else None."""
        flt = FilterSpec(tickers=(self.ticker,), forms=(kind,), until=self.as_of)
        dates = [d.filed_at for d in self.docstore.list_documents(flt) if d.filed_at]
        newest = max(dates, default=None)
        if newest is not None and (self.as_of - newest).days <= FRESH_DAYS[kind]:
            return newest
        return None

    def _filing_documents(self, kind: str) -> Iterator[Document]:
        raw = self.sources.filings.latest(self.ticker, kind, until=self.as_of, limit=FILINGS_PER_KIND[kind])
        for item in documents(raw):
            if isinstance(item, Document):
                yield item
            else:
                self.state.degraded.add(kind, f"a filing could not be fetched ({item.error})")

    # --- market data --------------------------------------------------------------------------------------------
    def _market(self) -> Ingested:
        if self.state.report is not None:
            return Ingested.nothing("already fetched this run (prices, companyfacts and web figures come together)")
        collected: list[Document] = []
        s = self.sources.market
        report = build_market_report(
            self.settings, self.ticker, self.as_of, prices=s.prices, facts=s.facts, news=s.news,
            macro=s.macro, filings=s.filings, profile=s.profile, lexicon=s.lexicon, web=s.web,
            unavailable=(), on_documents=collected.extend, mode=s.mode)
        self._on_report(report)
        # only what was knowable at as-of enters the store (later months/filings would skew BM25 statistics)
        out = self._ingest(filter_dated(collected, self.as_of))
        return replace(out, figures=len([f for f in report.figures() if f.value is not None]))

    # --- news -------------------------------------------------------------------------------------------------
    def _news(self) -> Ingested:
        news = self.sources.market.news
        if news is None:
            reason = next((d.reason for d in self.sources.market.unavailable if d.capability == "news"),
                          "no news source configured")
            return Ingested.nothing(reason)
        try:
            items = news.news(self.ticker, until=self.as_of)
        except NotFoundError as e:  # nothing recorded: the market report's degraded list already says so
            return Ingested.nothing(f"none available: {e}")
        return self._ingest(filter_dated(news_documents(items, company=self.state.company), self.as_of))

    def _ingest(self, docs: Iterable[Document]) -> Ingested:
        """Store what was fetched; with first-answer indexing (the default) only what the answer needs is embedded
        now, the rest after the answer (``ingest/first_answer.py``)."""
        docs = list(docs)
        rule = FirstAnswerRule(self.as_of) if self.settings.first_answer_indexing else None
        return Ingested.of(docs, self._pipeline().run(docs, defer=rule))
