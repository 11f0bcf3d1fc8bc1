"""On-demand fetch for a research run: exactly the data kinds the critic said are missing, dated on or before as-of.

Each fetch returns a log record (kind, why, outcome, documents) and ingests what it got, so the next round and the
next run find it in the store (DB-first). Failures are recorded and shown in ``degraded``; nothing is invented.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from equimind.errors import EquiMindError, NotFoundError
from equimind.models import Document
from equimind.timeguard import filter_dated

if TYPE_CHECKING:
    from equimind.market import MarketReport, MarketSources
    from equimind.research import ResearchRun

log = logging.getLogger(__name__)

FILINGS_PER_KIND = {"10-K": 1, "10-Q": 1, "8-K": 3}
# A stored filing younger than this (days before as-of) is current: a newer one cannot exist yet, so no fetch.
FRESH_DAYS = {"10-K": 370, "10-Q": 100, "8-K": 0}
RECENT_8K_DAYS = 120


class Fetcher:
    def __init__(self, run: ResearchRun, sources: MarketSources) -> None:
        self.run = run
        self.sources = sources
        self.settings = run.settings

    def fetch(self, kind: str, why: str) -> dict[str, Any]:
        t0 = time.perf_counter()
        record: dict[str, Any] = {"kind": kind, "why": why, "mode": self.sources.mode.value}
        try:
            if kind in FILINGS_PER_KIND:
                record.update(self._filings(kind))
            elif kind in ("prices", "companyfacts"):
                record.update(self._market(kind))
            elif kind == "news":
                record.update(self._news())
            else:
                record["outcome"] = f"skipped: no source for data kind {kind!r}"
        except EquiMindError as exc:
            record["outcome"] = f"failed: {exc}"
            self.run.state.degrade(kind, f"fetch failed ({exc})")
        record["ms"] = round((time.perf_counter() - t0) * 1000, 1)
        return record

    # --- filings ------------------------------------------------------------------------------------------------
    def _filings(self, kind: str) -> dict[str, Any]:
        fresh = self._fresh_stored(kind)
        if fresh is not None:
            return {"outcome": f"not fetched: stored {kind} filed {fresh} is current as of {self.run.as_of} "
                               f"(a newer one is not due within {FRESH_DAYS[kind]} days)", "documents": []}
        docs = filter_dated(list(self._filing_documents(kind)), self.run.as_of)
        docs.sort(key=lambda d: d.filed_at or self.run.as_of, reverse=True)
        if kind == "8-K":
            docs = [d for d in docs if d.filed_at and (self.run.as_of - d.filed_at).days <= RECENT_8K_DAYS]
        docs = docs[:FILINGS_PER_KIND[kind]]
        if not docs:
            return {"outcome": f"none available: no {kind} for {self.run.ticker} filed on or before "
                               f"{self.run.as_of} in the {self.sources.mode.value} source", "documents": []}
        return self._ingest(docs)

    def _fresh_stored(self, kind: str) -> Any:
        """Filing date of the newest stored ``kind`` for the ticker when it is still current, else None."""
        from equimind.models import FilterSpec

        flt = FilterSpec(tickers=(self.run.ticker,), forms=(kind,), until=self.run.as_of)
        dates = [d.filed_at for d in self.run.services.docstore.list_documents(flt) if d.filed_at]
        newest = max(dates, default=None)
        if newest is not None and (self.run.as_of - newest).days <= FRESH_DAYS[kind]:
            return newest
        return None

    def _filing_documents(self, kind: str) -> Iterator[Document]:
        t = self.run.ticker
        if self.settings.snapshot is None:
            from equimind.sources.live_filings import live_filing_documents

            for item in live_filing_documents(self.settings, (t,), (kind,), until=self.run.as_of,
                                              limit=FILINGS_PER_KIND[kind]):
                if isinstance(item, Document):
                    yield item
                else:
                    self.run.state.degrade(kind, f"a filing could not be fetched ({item.error})")
            return
        from equimind.sources.snapshot import SnapshotFilingsSource

        src = SnapshotFilingsSource(self.settings.snapshot)
        try:
            entries = src.list_entries(tickers=(t,), forms=(kind,))
        except NotFoundError:
            return
        entries = [e for e in entries if e.filed_at <= self.run.as_of]
        entries.sort(key=lambda e: e.filed_at, reverse=True)
        for e in entries[:FILINGS_PER_KIND[kind]]:
            yield src.load(e)

    # --- market data --------------------------------------------------------------------------------------------
    def _market(self, kind: str) -> dict[str, Any]:
        state = self.run.state
        if state.report is not None:
            return {"outcome": "already fetched this run (prices and companyfacts come together)", "documents": []}
        from equimind.market import build_market_report

        collected: list[Document] = []
        s = self.sources
        report = build_market_report(
            self.settings, self.run.ticker, self.run.as_of, prices=s.prices, facts=s.facts, news=s.news,
            macro=s.macro, filings=s.filings, profile=s.profile, lexicon=s.lexicon,
            unavailable=(), on_documents=collected.extend)
        self.run.set_report(report, store=True)
        # only what was knowable at as-of enters the store (later months/filings would skew BM25 statistics)
        out = self._ingest(filter_dated(collected, self.run.as_of))
        out["figures"] = len([f for f in report.figures() if f.value is not None])
        return out

    # --- news -------------------------------------------------------------------------------------------------
    def _news(self) -> dict[str, Any]:
        if self.sources.news is None:
            reason = next((d.reason for d in self.sources.unavailable if d.capability == "news"),
                          "no news source configured")
            return {"outcome": reason, "documents": []}
        from equimind.sources.to_documents import news_documents

        try:
            items = self.sources.news.news(self.run.ticker, until=self.run.as_of)
        except NotFoundError as e:  # nothing recorded: the market report's degraded list already says so
            return {"outcome": f"none available: {e}", "documents": []}
        docs = filter_dated(news_documents(items, company=self.run.state.company), self.run.as_of)
        return self._ingest(docs)

    def _ingest(self, docs: Iterable[Document]) -> dict[str, Any]:
        docs = list(docs)
        report = self.run.services.pipeline().run(docs)
        return {"outcome": f"ingested {report.documents_added + report.documents_completed} new document(s), "
                           f"{report.documents_skipped} already stored, {report.chunks_added} chunks",
                "documents": [{"doc_id": d.id, "form": d.form, "filed_at": d.filed_at, "title": d.title}
                              for d in docs[:20]],
                "documents_total": len(docs),
                "failed": [f.model_dump() for f in report.documents_failed]}


def report_from_json(raw: str) -> MarketReport:
    from equimind.market import MarketReport

    return MarketReport.model_validate_json(raw)
