"""``GET /api/v1/market/{ticker}`` (the market report) and ``.../series`` (what the dashboard's chart draws)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query

from equimind.interfaces.api.deps import AsOfDep, EngineDep, RequestIdDep, TickerDep
from equimind.interfaces.api.errors import ERRORS
from equimind.interfaces.traced import TracedMarketReport, TracedPriceSeries
from equimind.security.trace import traced

router = APIRouter(prefix="/api/v1", tags=["market"])


@router.get("/market/{ticker}", responses=ERRORS)
def market(ticker: TickerDep, engine: EngineDep, rid: RequestIdDep, as_of: AsOfDep = None) -> TracedMarketReport:
    """Last close, indicators, fundamentals, sentiment and macro as of a date, each figure with provenance."""
    return traced(TracedMarketReport, engine.market(ticker, as_of), engine.trace(rid))


@router.get("/market/{ticker}/series", responses=ERRORS)
def market_series(ticker: TickerDep, engine: EngineDep, rid: RequestIdDep, as_of: AsOfDep = None,
                  lookback_days: Annotated[int, Query(ge=20, le=1825)] = 365) -> TracedPriceSeries:
    """Daily OHLCV with SMA, Bollinger, RSI and MACD series up to the as-of date (what the chart draws)."""
    series = engine.price_series(ticker, as_of or date.today(), lookback_days)
    return traced(TracedPriceSeries, series, engine.trace(rid))
