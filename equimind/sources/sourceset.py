"""One set of sources per mode, chosen once (by ``Services``): the recorded snapshot, or the live clients.

Nothing else branches on snapshot vs live. A ``SourceSet`` gives the filing feed (latest filings of a kind for one
ticker; every filing for an ingest) as raw filing records (``RawFiling``, parsed into Documents by
``equimind.ingest.documents``) or per-filing ``SourceFailure`` rows, the market-data sources (prices, companyfacts,
filing index, news, profile, macro, the Loughran-McDonald lexicon) and the ticker resolver, and says in
``unavailable`` what is missing and why. Live clients hold HTTP connection pools: ``close()`` releases them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Protocol

from equimind.core.config import Settings
from equimind.core.degraded import Degradation
from equimind.core.documents import Origin
from equimind.core.errors import ConfigError, EquiMindError, NotFoundError
from equimind.lexicon.lm_lists import Lexicon
from equimind.sources.base import (
    FactsSource,
    FilingIndexSource,
    NewsSource,
    PriceSource,
    ProfileSource,
    RawFiling,
    SourceFailure,
    TickerInfo,
)
from equimind.sources.github import GitHubActivity, SnapshotGitHub
from equimind.sources.jobs import JobBoards, SnapshotJobBoards
from equimind.sources.live_filings import live_filing_records
from equimind.sources.macro import MacroClient, MacroSource
from equimind.sources.market_snapshot import SnapshotPrices, SnapshotSec
from equimind.sources.sec_edgar import SecEdgarClient
from equimind.sources.snapshot import SnapshotFilingsSource
from equimind.sources.snapshot_macro import SnapshotMacro
from equimind.sources.snapshot_news import SnapshotNews
from equimind.sources.web_intel import WebIntelSource
from equimind.sources.yahoo import YahooFinance

Item = RawFiling | SourceFailure


class TickerResolver(Protocol):
    def resolve(self, ticker: str) -> TickerInfo: ...

    def ticker_map(self) -> dict[str, TickerInfo]: ...


class FilingFeed(Protocol):
    """Where filings come from in this mode (raw records: the caller parses them with ``ingest.documents``)."""

    label: str

    def latest(self, ticker: str, kind: str, *, until: date, limit: int) -> Iterator[Item]:
        """The newest ``limit`` filings of ``kind`` filed on or before ``until`` (failed downloads as
        SourceFailure)."""
        ...

    def for_ingest(self, tickers: Sequence[str], forms: Sequence[str]) -> tuple[Iterator[Item], int | None,
                                                                               tuple[str, ...]]:
        """(items, expected count or None, the tickers covered) for ``equimind ingest``."""
        ...


class SnapshotFilings:
    """Filings of the recorded corpus (manifest + primary documents + 8-K submissions)."""

    def __init__(self, corpus_dir: Path) -> None:
        self.label = f"snapshot {corpus_dir}"
        self._root = corpus_dir

    def _source(self) -> SnapshotFilingsSource:
        return SnapshotFilingsSource(self._root)

    def latest(self, ticker: str, kind: str, *, until: date, limit: int) -> Iterator[Item]:
        src = self._source()
        try:
            entries = src.list_entries(tickers=(ticker,), forms=(kind,))
        except NotFoundError:
            return
        entries = sorted((e for e in entries if e.filed_at <= until), key=lambda e: e.filed_at, reverse=True)
        for e in entries[:limit]:
            yield src.load(e)

    def for_ingest(self, tickers: Sequence[str], forms: Sequence[str]) -> tuple[Iterator[Item], int | None,
                                                                               tuple[str, ...]]:
        src = self._source()
        entries = src.list_entries(tickers=tickers or None, forms=forms or None)
        chosen = tuple(tickers) or tuple(sorted({e.ticker for e in entries if e.ticker}))
        return src.iter_results(tickers=tickers or None, forms=forms or None), len(entries), chosen


class LiveFilings:
    """Filings from SEC EDGAR through the polite client (refuses without an SEC identity, naming the fix)."""

    label = "live SEC EDGAR + Yahoo Finance"

    def __init__(self, client: SecEdgarClient | None, refusal: ConfigError | None) -> None:
        self._client = client
        self._refusal = refusal

    def _sec(self) -> SecEdgarClient:
        if self._client is None:
            raise self._refusal or ConfigError("no SEC client")
        return self._client

    def latest(self, ticker: str, kind: str, *, until: date, limit: int) -> Iterator[Item]:
        yield from live_filing_records(self._sec(), (ticker,), (kind,), until=until, limit=limit)

    def for_ingest(self, tickers: Sequence[str], forms: Sequence[str]) -> tuple[Iterator[Item], int | None,
                                                                               tuple[str, ...]]:
        def items() -> Iterator[Item]:  # lazy: a missing SEC identity surfaces while iterating, as a failure
            yield from live_filing_records(self._sec(), tickers, forms or ("10-K", "10-Q"))

        return items(), None, tuple(tickers)


@dataclass
class MarketSources:
    """The market-data source implementations of one mode; ``unavailable`` says what is missing and why."""

    mode: Origin
    prices: PriceSource
    facts: FactsSource | None = None
    filings: FilingIndexSource | None = None
    news: NewsSource | None = None
    profile: ProfileSource | None = None
    macro: MacroSource | None = None
    lexicon: Lexicon | None = None
    web: list[WebIntelSource] = field(default_factory=list)  # job boards, GitHub activity
    unavailable: list[Degradation] = field(default_factory=list)


@dataclass
class SourceSet:
    mode: Origin
    filings: FilingFeed
    market: MarketSources
    resolver: TickerResolver | None
    resolver_refusal: EquiMindError | None = None
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def resolve(self, ticker: str) -> TickerInfo:
        """The ticker's registrant (NotFoundError when unknown; the live refusal when no SEC client exists)."""
        if self.resolver is None:
            raise self.resolver_refusal or ConfigError("no ticker resolver in this mode")
        return self.resolver.resolve(ticker)

    def ticker_map(self) -> dict[str, TickerInfo]:
        """The SEC ticker map of this mode (recorded, or live); the live refusal when no SEC client exists."""
        if self.resolver is None:
            raise self.resolver_refusal or ConfigError("no ticker resolver in this mode")
        return self.resolver.ticker_map()

    def close(self) -> None:
        for c in self._closers:
            c()
        self._closers.clear()


def _lexicon(settings: Settings, out: list[Degradation]) -> Lexicon | None:
    try:
        return Lexicon.load(settings.corpus_dir / "sentiment")
    except NotFoundError as e:
        out.append(Degradation(capability="sentiment", reason=f"unavailable ({e})"))
        return None


def snapshot_sources(settings: Settings, corpus_dir: Path) -> SourceSet:
    """Recorded readers only: no network at all."""
    unavailable: list[Degradation] = []
    lex = _lexicon(settings, unavailable)
    sec = SnapshotSec(corpus_dir)
    market = MarketSources(mode=Origin.SNAPSHOT, prices=SnapshotPrices(corpus_dir), facts=sec, filings=sec,
                           profile=sec, news=SnapshotNews(corpus_dir), macro=SnapshotMacro(corpus_dir), lexicon=lex,
                           web=[SnapshotJobBoards(corpus_dir, product_terms=settings.product_terms),
                                SnapshotGitHub(corpus_dir)],
                           unavailable=unavailable)
    return SourceSet(Origin.SNAPSHOT, SnapshotFilings(corpus_dir), market, resolver=sec)


def live_sources(settings: Settings) -> SourceSet:
    """The live clients: Yahoo Finance (prices, news, profile), SEC EDGAR (facts, filings) and the macro client."""
    unavailable: list[Degradation] = []
    lex = _lexicon(settings, unavailable)
    yahoo = YahooFinance(settings)
    market = MarketSources(mode=Origin.LIVE, prices=yahoo, news=yahoo, profile=yahoo, lexicon=lex,
                           unavailable=unavailable)
    closers: list[Callable[[], None]] = []
    client: SecEdgarClient | None = None
    refusal: ConfigError | None = None
    try:
        client = SecEdgarClient(settings)
        market.facts, market.filings = client, client
        closers.append(client.close)
    except ConfigError as e:
        refusal = e
        unavailable.append(Degradation(capability="fundamentals", reason=f"unavailable ({e})"))
    market.macro = MacroClient(settings)
    closers.append(market.macro.close)
    market.web = [JobBoards(settings), GitHubActivity(settings)]
    closers += [w.close for w in market.web]
    return SourceSet(Origin.LIVE, LiveFilings(client, refusal), market, resolver=client, resolver_refusal=refusal,
                     _closers=closers)


def open_sources(settings: Settings) -> SourceSet:
    """The one place that chooses: ``settings.snapshot`` set → the recorded snapshot, else the live clients."""
    if settings.snapshot is not None:
        return snapshot_sources(settings, settings.snapshot)
    return live_sources(settings)
