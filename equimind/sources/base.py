"""Records and Protocols shared by the live and the snapshot sources.

A live source (SEC EDGAR over HTTP, Yahoo Finance via yfinance) and its snapshot twin (the recorded corpus in
``../shared/corpus``) implement the same Protocol, so every consumer works unchanged with ``--snapshot DIR``.
Records are frozen dataclasses; dates are ``datetime.date`` (bar dates are the exchange's local trading day).

The filing sources (snapshot, live SEC, local files) yield ``RawFiling`` records: everything a ``Document`` needs
except what parsing the body produces (canonical text, sections, pages, declared fiscal period). Turning them into
Documents is ``ingest``'s job (``equimind.ingest.documents``); sources never parse document text. A filing that cannot
be had (missing file, failed download) is yielded as a ``SourceFailure`` so the rest of a batch goes on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from equimind.core.documents import Origin, Source
from equimind.core.errors import NotFoundError
from equimind.lexicon.forms import PERIODIC_FORMS


@dataclass(frozen=True)
class PriceBar:
    """One daily bar as the source reports it (Yahoo: split- and dividend-adjusted OHLC)."""

    day: date
    open: float
    high: float
    low: float
    close: float
    volume: float
    dividend: float = 0.0
    split: float = 0.0  # split ratio on that day (10.0 for a 10:1 split), 0.0 when none


@dataclass(frozen=True)
class PriceHistory:
    """Daily bars in ascending date order, with where they came from."""

    ticker: str
    bars: tuple[PriceBar, ...]
    source: Source
    origin: Origin
    location: str  # URL or file path
    adjustment: str = "split- and dividend-adjusted (yfinance auto_adjust) as of the last bar downloaded"

    def __post_init__(self) -> None:
        days = [b.day for b in self.bars]
        if days != sorted(days) or len(set(days)) != len(days):
            raise ValueError("price bars must be in strictly ascending date order")

    def up_to(self, as_of: date) -> PriceHistory:
        """Only the bars dated on or before ``as_of`` (the as-of rule)."""
        return PriceHistory(self.ticker, tuple(b for b in self.bars if b.day <= as_of), self.source,
                            self.origin, self.location, self.adjustment)

    def since(self, start: date) -> PriceHistory:
        return PriceHistory(self.ticker, tuple(b for b in self.bars if b.day >= start), self.source,
                            self.origin, self.location, self.adjustment)

    @property
    def first_day(self) -> date | None:
        return self.bars[0].day if self.bars else None

    @property
    def last_day(self) -> date | None:
        return self.bars[-1].day if self.bars else None

    def splits(self) -> tuple[tuple[date, float], ...]:
        """(day, ratio) of every split in the history (ratio > 0, e.g. 10.0 for 10-for-1)."""
        return tuple((b.day, b.split) for b in self.bars if b.split and b.split > 0)


@dataclass(frozen=True)
class XbrlFact:
    """One value of one XBRL concept as reported in one filing (a companyfacts entry)."""

    taxonomy: str
    concept: str
    unit: str
    value: float
    start: date | None  # None for instant facts (balance sheet)
    end: date
    accession: str
    filed: date
    form: str
    fy: int | None = None
    fp: str | None = None
    frame: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.taxonomy}:{self.concept}"

    @property
    def days(self) -> int | None:
        """Length of a duration fact in days (inclusive), None for an instant."""
        return None if self.start is None else (self.end - self.start).days + 1


@dataclass(frozen=True, eq=False)
class CompanyFacts:
    """The XBRL companyfacts of one company (data.sec.gov/api/xbrl/companyfacts/CIK##########.json)."""

    cik: str
    entity_name: str
    ticker: str | None
    facts: Mapping[str, tuple[XbrlFact, ...]]  # keyed by "taxonomy:concept"
    origin: Origin
    location: str

    def get(self, qualified_concept: str, unit: str | None = None) -> tuple[XbrlFact, ...]:
        found = self.facts.get(qualified_concept, ())
        return tuple(f for f in found if unit is None or f.unit == unit)

    def concepts(self) -> tuple[str, ...]:
        return tuple(sorted(self.facts))


@dataclass(frozen=True)
class TickerInfo:
    ticker: str
    cik: str  # zero-padded to 10 digits
    name: str


@dataclass(frozen=True)
class FilingRef:
    """One filing from the submissions index, with the URL of its primary document."""

    cik: str
    ticker: str | None
    company: str | None
    accession: str
    form: str
    filed: date
    period_end: date | None
    primary_document: str
    url: str | None  # None only for a recorded document whose accession is unknown
    origin: Origin
    local_path: str | None = None  # where the snapshot holds the primary document, if it does


@dataclass(frozen=True)
class NewsItem:
    ticker: str
    title: str
    publisher: str | None
    published_at: datetime
    url: str | None
    summary: str = ""
    origin: Origin = Origin.LIVE
    source: Source = Source.YAHOO_FINANCE  # who served the item (a snapshot may hold FMP or Finnhub news)


@dataclass(frozen=True)
class CompanyProfile:
    ticker: str
    name: str
    source: Source
    origin: Origin
    fields: Mapping[str, Any] = field(default_factory=dict)  # sector, industry, sic, fiscalYearEnd, ...


class BodyKind(StrEnum):
    """How a raw filing's body is to be parsed."""

    HTML = "html"  # a primary document (inline XBRL), or the HTML already extracted from an 8-K submission file
    PDF = "pdf"


@dataclass(frozen=True)
class RawExhibit:
    """One exhibit filed with a filing (e.g. EX-13, the annual report a 10-K incorporates by reference), raw."""

    document_type: str  # as the filing index types it: "EX-13", "EX-13.1", "EX-99.2"
    document: str  # its file name in the filing's folder
    description: str  # the filing index's description ("2024 Annual Report to Shareholders"), may be empty
    url: str
    body: str


@dataclass(frozen=True)
class RawFiling:
    """One filing as its source has it, before parsing: provenance, the raw body and the source's own meta pairs.

    ``equimind.ingest.documents.to_document`` parses ``body`` and builds the Document from these fields (its id is
    ``Document.make_id(source_key, parsed text)``). ``name`` (file path or URL) names the filing in errors.
    ``declared_fiscal`` False: the fiscal year is already known (file name or caller's metadata), so the fiscal
    year / period the document declares is not recorded. ``exhibits``: the exhibits of the filing the source fetched
    with it (``ingest/exhibits.py`` appends them to the text as labelled sections)."""

    source_key: str
    ticker: str | None
    cik: str | None
    company: str | None
    source: Source
    origin: Origin
    form: str  # "unknown" when a local file says nothing (no section hint for the parser then)
    filed_at: date | None
    period_end: date | None
    url: str | None
    title: str
    body: bytes | str
    kind: BodyKind
    name: str
    meta: tuple[tuple[str, str], ...] = ()  # corpus_path, accession, primary_document, doc_name, file, ...
    declared_fiscal: bool = True
    exhibits: tuple[RawExhibit, ...] = ()  # exhibits fetched with it (a 10-K's EX-13), appended when parsed


@dataclass(frozen=True)
class SourceFailure:
    """A filing that could not be produced (missing file, failed download, unreadable PDF, parse error...): one row of
    a batch, reported and skipped; the rest of the batch goes on."""

    source: str
    error: str


# ---------------------------------------------------------------------------------------------------- Protocols


@runtime_checkable
class PriceSource(Protocol):
    name: str

    def history(self, ticker: str, *, start: date | None = None, end: date | None = None) -> PriceHistory:
        """Daily bars with start <= day <= end (either bound optional). Raises NotFoundError / SourceError."""
        ...


@runtime_checkable
class FactsSource(Protocol):
    name: str

    def company_facts(self, ticker: str) -> CompanyFacts:
        """XBRL companyfacts of the company. Raises NotFoundError when there are none."""
        ...


@runtime_checkable
class FilingIndexSource(Protocol):
    name: str

    def filings(self, ticker: str, *, forms: Sequence[str] = PERIODIC_FORMS,
                until: date | None = None) -> list[FilingRef]:
        """Filings of the given forms filed on or before ``until``, newest first."""
        ...

    def primary_document(self, ref: FilingRef) -> str:
        """The primary document's HTML. Raises NotFoundError when it cannot be had."""
        ...


@runtime_checkable
class NewsSource(Protocol):
    name: str

    def news(self, ticker: str, *, limit: int = 20, until: date | None = None) -> list[NewsItem]:
        """The ``limit`` most recent items, newest first; with ``until``, only items published on or before that
        date (its whole UTC day counts: the as-of rule)."""
        ...


@runtime_checkable
class ProfileSource(Protocol):
    name: str

    def profile(self, ticker: str) -> CompanyProfile:
        ...


@runtime_checkable
class TickerResolver(Protocol):
    def resolve(self, ticker: str) -> TickerInfo:
        """The CIK and name of ``ticker``. Raises NotFoundError for an unknown ticker."""
        ...


def normalise_ticker(ticker: str) -> str:
    """Upper-case, stripped; SEC writes class shares with '-' (BRK-B) where Yahoo also uses '-'."""
    t = ticker.strip().upper().replace(".", "-")
    if not t or len(t) > 12 or not all(c.isalnum() or c == "-" for c in t):
        raise NotFoundError(f"{ticker!r} is not a ticker symbol; use e.g. NVDA or BRK-B")
    return t
