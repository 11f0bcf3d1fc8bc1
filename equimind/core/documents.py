"""Documents, their sections and pages, the parent and child chunks cut from them, and the metadata filter both
retrieval legs apply. Ids are content hashes (``sha256_hex``). Imports nothing of ours.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date
from enum import StrEnum


def sha256_hex(*parts: str) -> str:
    """Content hash used for every id: sha256 over the parts joined by a newline."""
    h = hashlib.sha256()
    for i, p in enumerate(parts):
        if i:
            h.update(b"\n")
        h.update(p.encode("utf-8"))
    return h.hexdigest()


def date_to_int(d: date) -> int:
    """2025-02-26 -> 20250226 (range filters in Chroma/SQLite work on integers)."""
    return d.year * 10000 + d.month * 100 + d.day


class Source(StrEnum):
    SEC_EDGAR = "sec_edgar"
    YAHOO_FINANCE = "yahoo_finance"
    LOCAL = "local"
    FMP = "fmp"  # Financial Modeling Prep stock news (recorded)
    FINNHUB = "finnhub"  # Finnhub company news (recorded)


class Origin(StrEnum):
    """Where the bytes physically came from (a snapshot of SEC data is still source=sec_edgar)."""

    LIVE = "live"
    SNAPSHOT = "snapshot"
    LOCAL_FILE = "local_file"


@dataclass(frozen=True)
class Section:
    """A named span [start, end) of a document's canonical text (e.g. "Item 1A. Risk Factors")."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class PageSpan:
    """Page ``number`` (zero-based, as FinanceBench counts) covers [start, end) of the canonical text."""

    number: int
    start: int
    end: int


@dataclass(frozen=True)
class Document:
    """One source document with its canonical text. ``id`` = sha256(source_key, text)."""

    id: str
    source_key: str
    ticker: str | None
    cik: str | None
    company: str | None
    source: Source
    origin: Origin
    form: str
    filed_at: date | None
    period_end: date | None
    url: str | None
    title: str
    text: str
    sections: tuple[Section, ...] = ()
    pages: tuple[PageSpan, ...] = ()
    meta: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def make_id(source_key: str, text: str) -> str:
        return sha256_hex(source_key, text)

    @property
    def sha256(self) -> str:
        """Hash of the canonical text alone (what a Citation records)."""
        return sha256_hex(self.text)

    def meta_dict(self) -> dict[str, str]:
        return dict(self.meta)

    def section_at(self, offset: int) -> str | None:
        for s in self.sections:
            if s.start <= offset < s.end:
                return s.name
        return None

    def pages_for(self, start: int, end: int) -> tuple[int, int] | None:
        """(first_page, last_page) overlapped by [start, end), or None if the document is not paged."""
        hit = [p.number for p in self.pages if p.start < end and start < p.end]
        return (min(hit), max(hit)) if hit else None


@dataclass(frozen=True)
class Parent:
    """An ~800-token passage the agents read. Span [start, end) into the document's canonical text."""

    id: str
    doc_id: str
    start: int
    end: int
    section: str | None


@dataclass(frozen=True)
class Chunk:
    """A ~200-token child passage that is embedded and BM25-indexed; lies inside exactly one Parent."""

    id: str
    doc_id: str
    parent_id: str
    start: int
    end: int
    parent_start: int
    parent_end: int
    section: str | None
    text: str
    ticker: str | None
    source: Source
    form: str
    filed_at: int  # YYYYMMDD, 0 when unknown
    page_start: int | None = None
    page_end: int | None = None

    @staticmethod
    def make_id(doc_id: str, start: int, end: int) -> str:
        return sha256_hex(doc_id, str(start), str(end))


@dataclass(frozen=True)
class FilterSpec:
    """Metadata filter applied in BOTH retrieval legs. Dates are inclusive on filed_at."""

    tickers: tuple[str, ...] = ()
    since: date | None = None
    until: date | None = None
    sources: tuple[Source, ...] = ()
    forms: tuple[str, ...] = ()
    doc_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"since ({self.since}) is after until ({self.until}); swap them or drop one")

    def is_empty(self) -> bool:
        return not (self.tickers or self.since or self.until or self.sources or self.forms or self.doc_ids)

    def matches(self, chunk: Chunk) -> bool:
        """Reference semantics of the filter (stores implement the same rule natively)."""
        if self.tickers and (chunk.ticker or "") not in self.tickers:
            return False
        if self.sources and chunk.source not in self.sources:
            return False
        if self.forms and chunk.form not in self.forms:
            return False
        if self.doc_ids and chunk.doc_id not in self.doc_ids:
            return False
        if self.since and chunk.filed_at < date_to_int(self.since):
            return False
        return not (self.until and chunk.filed_at > date_to_int(self.until))
