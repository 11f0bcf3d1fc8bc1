"""Domain types that cross stage boundaries. Imports nothing of ours.

Records inside the pipeline are frozen dataclasses (change with ``dataclasses.replace``); the Recommendation and
everything an interface prints are Pydantic models (validated, JSON-serialisable).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, SerializeAsAny


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


class Degradation(BaseModel):
    model_config = ConfigDict(frozen=True)
    capability: str
    reason: str

    def __str__(self) -> str:
        return f"{self.capability}: {self.reason}"


class Degradations:
    """The one collector of what was unavailable in a run: ordered, each (capability, reason) once."""
    def __init__(self) -> None:
        self._items: list[Degradation] = []

    def add(self, capability: str, reason: str) -> None:
        self.extend([Degradation(capability=capability, reason=reason)])

    def extend(self, items: Iterable[Degradation]) -> None:
        for d in items:
            if d not in self._items:
                self._items.append(d)

    def items(self) -> list[Degradation]:
        return list(self._items)


# A Degradation that travels as its "capability: reason" text (SearchResult and Health print it so; read back too).
DegradationNote = Annotated[Degradation, PlainSerializer(str, return_type=str), BeforeValidator(
    lambda v: dict(zip(("capability", "reason"), v.split(": ", 1), strict=False)) if isinstance(v, str) else v)]


# Retrieval results (printed by CLI/API: Pydantic)
class DocumentRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    doc_id: str
    ticker: str | None
    company: str | None
    form: str
    filed_at: date | None
    period_end: date | None
    source: Source
    origin: Origin
    title: str
    url: str | None


class StageScores(BaseModel):
    """Every retrieval stage's view of a hit; a missing stage says why in ``*_status``."""

    model_config = ConfigDict(frozen=True)

    dense_rank: int | None = None
    dense_score: float | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None
    rrf_score: float | None = None
    rerank_score: float | None = None
    rerank_status: str = "not requested"


class SearchHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    rank: int
    chunk_id: str
    text: str
    start: int
    end: int
    parent_id: str
    parent_text: str
    parent_start: int
    parent_end: int
    section: str | None
    page_start: int | None = None
    page_end: int | None = None
    document: DocumentRef
    scores: StageScores


class SearchResult(BaseModel):
    query: str
    sparse_terms: str = Field(default="", description="Words the BM25 leg searched for besides the query (the "
                              "XBRL concept words of the metrics it names; retrieval/query_shape.py).")
    mode: str
    filters: dict[str, Any]
    hits: list[SearchHit]
    auto_filter: str | None = Field(default=None, description="How the filter was parsed from the query's own "
                                    "company / fiscal-year words (None: the caller's filter, or auto-filter off).")
    degraded: list[DegradationNote] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)


# Research output
class Rating(StrEnum):
    STRONG_BUY = "STRONG_BUY"
    BUY = "BUY"
    HOLD = "HOLD"
    SELL = "SELL"
    STRONG_SELL = "STRONG_SELL"


class Speaker(StrEnum):
    BULL = "bull"
    BEAR = "bear"
    JUDGE = "judge"


class Citation(BaseModel):
    """A quoted span of a stored document: [start, end) into its canonical text."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    start: int
    end: int
    quote: str
    doc_sha256: str


class Figure(BaseModel):
    """A number in a report with its provenance."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    value: float | None
    unit: str
    as_of: date | None
    formula: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, Any] = Field(default_factory=dict)


class Claim(BaseModel):
    model_config = ConfigDict(frozen=True)

    speaker: Speaker
    text: str
    citations: list[Citation] = Field(default_factory=list)
    figure_ids: list[str] = Field(default_factory=list)
    strength: float = 0.5
    signal: str = ""


class IterationLog(BaseModel):
    iteration: int
    queries: list[str] = Field(default_factory=list)
    filters: dict[str, Any] = Field(default_factory=dict)
    hits: list[dict[str, Any]] = Field(default_factory=list)
    fetched: list[dict[str, Any]] = Field(default_factory=list)
    critic: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)


class AgenticRAGReport(BaseModel):
    iterations: int
    converged: bool
    coverage: float
    curated_nodes: int
    discarded_nodes: int
    log: list[IterationLog] = Field(default_factory=list)
    # the answerability check's verdict (equimind/answerability/check.py, ADR 0006); None when it did not run
    answerability: dict[str, Any] | None = None


class JudgeSynthesis(BaseModel):
    winning_side: Speaker | None
    winning_thesis: str
    key_risks: list[str] = Field(default_factory=list)
    key_catalysts: list[str] = Field(default_factory=list)
    reasoning: list[str] = Field(default_factory=list)


class Recommendation(BaseModel):
    ticker: str
    question: str
    as_of: date
    rating: Rating | None
    conviction: float = Field(ge=0.0, le=1.0)
    thesis: str
    refused: bool = False
    refusal_reason: str | None = None
    answer: SerializeAsAny[BaseModel] | None = None  # Answer (answer/record.py): a specific ask; a decision topic
    bull_case: list[Claim] = Field(default_factory=list)
    bear_case: list[Claim] = Field(default_factory=list)
    judge: JudgeSynthesis | None = None
    figures: list[Figure] = Field(default_factory=list)
    agentic_rag: AgenticRAGReport | None = None
    degraded: list[Degradation] = Field(default_factory=list)
    dropped_claims: int = 0
    provider: str = "offline"
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    usage: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)


@dataclass(frozen=True)
class EvidenceNode:
    """A curated passage handed to the agents: the parent span a search hit belongs to, with its scores.

    ``text`` is exactly ``document.text[start:end]``. Figures (computed numbers) travel separately as ``Figure``.
    """

    id: str
    doc_id: str
    start: int
    end: int
    text: str
    ticker: str | None
    company: str | None
    source: Source
    form: str
    filed_at: date | None
    section: str | None
    score: float
    doc_sha256: str
    page_start: int | None = None
    page_end: int | None = None
    queries: tuple[str, ...] = field(default_factory=tuple)
