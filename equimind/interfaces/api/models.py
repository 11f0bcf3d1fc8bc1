"""Request and response bodies of the REST API (Pydantic: this is a boundary).

Every request body forbids unknown fields, so a misspelt field is a 422 naming it rather than a silently ignored
option. Responses reuse the domain models (SearchResult, Recommendation, MarketReport, ...) with a ``trace`` added
(``interfaces/traced.py``); the only API-specific responses are the error body, the citation checks and the document
list (the price series drawn by the dashboard is the engine's ``equimind.analytics.price_series.PriceSeries``).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    field_validator,
    model_validator,
)

from equimind.core.documents import FilterSpec, Source
from equimind.core.errors import ConfigError
from equimind.core.search import DocumentRef
from equimind.llm.providers import parse_provider
from equimind.security.trace import Trace

TICKER_PATTERN = r"^[A-Za-z][A-Za-z0-9.\-]{0,9}$"
FORM_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ./\-]{0,15}$"
DOC_ID_PATTERN = r"^[0-9a-f]{64}$"
MAX_SPAN = 20_000
MAX_CONTEXT = 5_000
MAX_BATCH = 50  # quotes per batch citation check (= the default MCP policy's max_items)

Ticker = Annotated[str, StringConstraints(strip_whitespace=True, pattern=TICKER_PATTERN),
                   AfterValidator(str.upper)]
Form = Annotated[str, StringConstraints(strip_whitespace=True, pattern=FORM_PATTERN), AfterValidator(str.upper)]
RetrievalModeName = Literal["dense", "bm25", "hybrid", "hybrid+rerank"]  # = config.RETRIEVAL_MODES (a test pins it)


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _iso_day(value: object) -> object:
    """Only YYYY-MM-DD (pydantic alone would also take 0 or 1700000000 as a Unix timestamp)."""
    if isinstance(value, date) or (isinstance(value, str) and _ISO_DAY.fullmatch(value)):
        return value
    raise ValueError("must be a date written YYYY-MM-DD")


IsoDate = Annotated[date, BeforeValidator(_iso_day)]


def _not_future(v: date) -> date:
    if v > date.today():
        raise ValueError(f"as_of {v} is in the future; use today ({date.today()}) or an earlier date")
    return v


AsOfDay = Annotated[IsoDate, AfterValidator(_not_future)]  # a request's as-of date: YYYY-MM-DD, not after today


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain at least one non-space character")
    return value


class ErrorBody(BaseModel):
    """Every non-422 error: what went wrong and, where there is one, what to do about it."""

    detail: str
    hint: str | None = None
    trace: Trace | None = Field(default=None, description="The trace every result carries (request id = the "
                                "X-Request-ID header), when the server could read it.")


class SearchRequest(BaseModel):
    """``POST /api/v1/search``: hybrid search with metadata filters (dates are inclusive, on the filing date)."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, Field(min_length=1, max_length=500), AfterValidator(_not_blank)]
    tickers: list[Ticker] = Field(default_factory=list, max_length=20)
    forms: list[Form] = Field(default_factory=list, max_length=10)
    sources: list[Source] = Field(default_factory=list, max_length=3)
    since: IsoDate | None = None
    until: IsoDate | None = None
    mode: RetrievalModeName | None = Field(default=None, description="Default: the server's EQUIMIND_RETRIEVAL_MODE.")
    top_k: int | None = Field(default=None, ge=1, le=50, description="Default: the server's EQUIMIND_TOP_K.")
    auto_filter: StrictBool | None = Field(
        default=None, description="With no filter given, turn the companies and fiscal years named in the query into "
        "the filter (default: the server's EQUIMIND_AUTO_FILTER, on unless set false). The result's auto_filter says "
        "what was applied.")

    @model_validator(mode="after")
    def _dates_in_order(self) -> SearchRequest:
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"since ({self.since}) is after until ({self.until}); swap them or drop one")
        return self

    def to_filter(self) -> FilterSpec:
        return FilterSpec(tickers=tuple(dict.fromkeys(self.tickers)), since=self.since, until=self.until,
                          sources=tuple(dict.fromkeys(self.sources)), forms=tuple(dict.fromkeys(self.forms)))


class ResearchRequest(BaseModel):
    """``POST /api/v1/research`` and ``/research/stream``."""

    model_config = ConfigDict(extra="forbid")

    ticker: Ticker
    question: Annotated[str, Field(min_length=1, max_length=1000), AfterValidator(_not_blank)]
    as_of: AsOfDay | None = Field(default=None, description="Nothing dated after it is used. Default: today.")
    provider: str | None = Field(default=None, max_length=40,
                                 description="LLM provider for the debate. Default: the server's EQUIMIND_PROVIDER.")

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            return parse_provider(v).value
        except ConfigError as exc:
            raise ValueError(str(exc)) from None


class AskRequest(BaseModel):
    """``POST /api/v1/ask`` and ``/ask/stream``: a specific question; the ticker may be left to the question."""

    model_config = ConfigDict(extra="forbid")

    question: Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_not_blank)]
    ticker: Ticker | None = Field(default=None, description="Default: the company the question names.")
    as_of: AsOfDay | None = Field(default=None, description="Nothing dated after it is used. Default: today.")


class CitationRequest(BaseModel):
    """``POST /api/v1/citations/verify``: is this quote in that document? (no LLM)."""

    model_config = ConfigDict(extra="forbid")

    doc_id: Annotated[str, StringConstraints(pattern=DOC_ID_PATTERN)]
    quote: Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_not_blank)]


class CitationCheckOut(BaseModel):
    """The outcome of a citation check; ``verified`` only for an exact or normalised match."""

    doc_id: str
    quote: str
    match: str
    verified: bool
    start: int | None
    end: int | None
    passage: str | None
    similarity: float
    doc_sha256: str

    @classmethod
    def of(cls, check: Any) -> CitationCheckOut:
        return cls(doc_id=check.doc_id, quote=check.quote, match=str(check.match), verified=check.verified,
                   start=check.start, end=check.end, passage=check.passage, similarity=check.similarity,
                   doc_sha256=check.doc_sha256)


class CitationSpan(BaseModel):
    """One quote of a batch check and the span [start, end) of the document it claims to come from."""

    model_config = ConfigDict(extra="forbid")

    doc_id: Annotated[str, StringConstraints(pattern=DOC_ID_PATTERN)]
    start: StrictInt = Field(ge=0, le=100_000_000)
    end: StrictInt = Field(ge=1, le=100_000_000)
    quote: Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_not_blank)]

    @model_validator(mode="after")
    def _span(self) -> CitationSpan:
        if self.end <= self.start:
            raise ValueError(f"end ({self.end}) must be greater than start ({self.start})")
        return self


class CitationBatchRequest(BaseModel):
    """``POST /api/v1/citations/verify-batch``: up to ``MAX_BATCH`` quotes at once."""

    model_config = ConfigDict(extra="forbid")

    citations: list[CitationSpan] = Field(min_length=1, max_length=MAX_BATCH)


class SpanCheckOut(BaseModel):
    """One quote's outcome: ``check`` (None when the document is not stored; ``error`` says so) and whether the
    verified match lies inside the claimed span."""

    doc_id: str
    claimed_start: int
    claimed_end: int
    in_claimed_span: bool
    check: CitationCheckOut | None
    error: str | None = None

    @classmethod
    def of(cls, span: Any) -> SpanCheckOut:
        return cls(doc_id=span.doc_id, claimed_start=span.start, claimed_end=span.end,
                   in_claimed_span=span.in_claimed_span,
                   check=CitationCheckOut.of(span.check) if span.check is not None else None, error=span.error)


class CitationBatchOut(BaseModel):
    """A batch citation check, in request order; ``verified`` counts exact or normalised matches."""

    results: list[SpanCheckOut]
    verified: int
    total: int
    trace: Trace

    @classmethod
    def of(cls, spans: list[Any], trace: Trace) -> CitationBatchOut:
        results = [SpanCheckOut.of(s) for s in spans]
        return cls(results=results, verified=sum(1 for r in results if r.check is not None and r.check.verified),
                   total=len(results), trace=trace)


class DocumentList(BaseModel):
    """Indexed documents (newest filing first): ``count`` listed of ``total`` matching."""

    documents: list[DocumentRef]
    count: int
    total: int
    trace: Trace

    @classmethod
    def of(cls, docs: list[DocumentRef], limit: int, trace: Trace) -> DocumentList:
        """The first ``limit`` of ``docs`` (what ``GET /documents`` and the MCP tool ``list_documents`` return)."""
        return cls(documents=docs[:limit], count=min(limit, len(docs)), total=len(docs), trace=trace)


class ResearchStreamInfo(BaseModel):
    """Documents the Server-Sent Events of ``/research/stream`` (the schema of each event's ``data``)."""

    event: Literal["stage", "recommendation", "error"]
    data: dict[str, Any]
