"""``GET /api/v1/market/{ticker}`` (the market report) and ``.../series`` (what the dashboard's chart draws)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from equimind.analytics.market import MarketReport
from equimind.analytics.price_series import PriceSeries
from equimind.interfaces.api.deps import AsOfDep, EngineDep, TickerDep
from equimind.interfaces.api.errors import ERRORS

router = APIRouter(prefix="/api/v1", tags=["market"])


@router.get("/market/{ticker}", responses=ERRORS)
def market(ticker: TickerDep, engine: EngineDep, as_of: AsOfDep = None) -> MarketReport:
    """Last close, indicators, fundamentals, sentiment and macro as of a date, each figure with provenance."""
    return engine.market(ticker, as_of)


@router.get("/market/{ticker}/series", responses=ERRORS, response_model=PriceSeries)
def market_series(ticker: TickerDep, engine: EngineDep, as_of: AsOfDep = None,
                  lookback_days: Annotated[int, Query(ge=20, le=1825)] = 365) -> BaseModel:
    """Daily OHLCV with SMA, Bollinger, RSI and MACD series up to the as-of date (what the chart draws)."""
    return engine.price_series(ticker, as_of or date.today(), lookback_days)
