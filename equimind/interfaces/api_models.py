"""Request and response bodies of the REST API (Pydantic: this is a boundary).

Every request body forbids unknown fields, so a misspelt field is a 422 naming it rather than a silently ignored
option. Responses reuse the domain models (SearchResult, Recommendation, MarketReport, ...) unchanged; the only
API-specific responses are the error body, the citation check and the price series drawn by the dashboard.
"""

from __future__ import annotations

import math
import re
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    field_validator,
    model_validator,
)

from equimind.errors import NotFoundError
from equimind.models import FilterSpec, Source
from equimind.sources.base import PriceSource

TICKER_PATTERN = r"^[A-Za-z][A-Za-z0-9.\-]{0,9}$"
FORM_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ./\-]{0,15}$"
DOC_ID_PATTERN = r"^[0-9a-f]{64}$"
MAX_SPAN = 20_000
MAX_CONTEXT = 5_000

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


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain at least one non-space character")
    return value


class ErrorBody(BaseModel):
    """Every non-422 error: what went wrong and, where there is one, what to do about it."""

    detail: str
    hint: str | None = None


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
    as_of: IsoDate | None = Field(default=None, description="Nothing dated after it is used. Default: today.")
    provider: str | None = Field(default=None, max_length=40,
                                 description="LLM provider for the debate. Default: the server's EQUIMIND_PROVIDER.")

    @field_validator("as_of")
    @classmethod
    def _not_future(cls, v: date | None) -> date | None:
        if v is not None and v > date.today():
            raise ValueError(f"as_of {v} is in the future; use today ({date.today()}) or an earlier date")
        return v

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, v: str | None) -> str | None:
        if v is None:
            return None
        from equimind.agents.providers import parse_provider
        from equimind.errors import ConfigError

        try:
            return parse_provider(v).value
        except ConfigError as exc:
            raise ValueError(str(exc)) from None


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


class ResearchStreamInfo(BaseModel):
    """Documents the Server-Sent Events of ``/research/stream`` (the schema of each event's ``data``)."""

    event: Literal["stage", "recommendation", "error"]
    data: dict[str, Any]


def _clean(values: Any) -> list[float | None]:
    """Floats for JSON: NaN (an indicator not yet defined) becomes null."""
    return [None if math.isnan(v) else round(float(v), 6) for v in values]


class PriceSeries(BaseModel):
    """Daily OHLCV and indicator series of one ticker up to the as-of date (oldest first; null = not yet defined).

    Prices are as the source reports them (Yahoo: split- and dividend-adjusted); the indicators are computed from
    those closes with ``equimind.analytics.indicators`` (SMA, Bollinger 20/2, RSI 14 Wilder, MACD 12/26/9) over the
    whole fetched history, of which the last ``lookback_days`` are returned."""

    ticker: str
    as_of: date
    source: str
    origin: str
    location: str
    adjustment: str
    dates: list[date]
    open: list[float]
    high: list[float]
    low: list[float]
    close: list[float]
    volume: list[float]
    sma_20: list[float | None]
    sma_50: list[float | None]
    sma_200: list[float | None]
    bb_upper: list[float | None]
    bb_middle: list[float | None]
    bb_lower: list[float | None]
    rsi_14: list[float | None]
    macd: list[float | None]
    macd_signal: list[float | None]
    macd_hist: list[float | None]
    formulas: dict[str, str]

    @classmethod
    def from_history(cls, history: Any, as_of: date, keep_from: date) -> PriceSeries:
        """Indicators over all of ``history`` (already cut at ``as_of``), bars from ``keep_from`` on returned."""
        from equimind.analytics.indicators import bollinger, macd, rsi_wilder, sma

        bars = history.bars
        closes = [b.close for b in bars]
        lo, mid, up = bollinger(closes)
        line, sig, hist = macd(closes)
        i0 = next((i for i, b in enumerate(bars) if b.day >= keep_from), len(bars))
        cut = slice(i0, None)
        series = {"sma_20": sma(closes, 20), "sma_50": sma(closes, 50), "sma_200": sma(closes, 200),
                  "bb_upper": up, "bb_middle": mid, "bb_lower": lo, "rsi_14": rsi_wilder(closes, 14),
                  "macd": line, "macd_signal": sig, "macd_hist": hist}
        return cls(
            ticker=history.ticker, as_of=as_of, source=history.source.value, origin=history.origin.value,
            location=history.location, adjustment=history.adjustment, dates=[b.day for b in bars[cut]],
            open=[b.open for b in bars[cut]], high=[b.high for b in bars[cut]], low=[b.low for b in bars[cut]],
            close=closes[cut], volume=[b.volume for b in bars[cut]],
            **{name: _clean(values[cut]) for name, values in series.items()},
            formulas={"sma_n": "mean of the last n closes", "bollinger": "sma20 ± 2 population std of 20 closes",
                      "rsi_14": "Wilder RSI, 14 days", "macd": "ema12 - ema26 (SMA-seeded EMAs)",
                      "macd_signal": "ema9 of the MACD line", "macd_hist": "macd - signal",
                      "history_start": bars[0].day.isoformat() if bars else ""},
        )


def price_series(prices: PriceSource, ticker: str, as_of: date, lookback_days: int) -> PriceSeries:
    """OHLCV + indicators for the chart. Indicators start from the same history as the market report's (two years
    before ``as_of``, or more for a longer window), so their last values equal the report's figures."""
    from equimind.analytics.market import DEFAULT_LOOKBACK_DAYS

    start = as_of - timedelta(days=max(DEFAULT_LOOKBACK_DAYS, lookback_days + 365))
    history = prices.history(ticker, start=start).up_to(as_of)
    if not history.bars:
        raise NotFoundError(f"no price bars for {ticker} between {start} and {as_of}; choose a later as_of")
    return PriceSeries.from_history(history, as_of, as_of - timedelta(days=lookback_days))
