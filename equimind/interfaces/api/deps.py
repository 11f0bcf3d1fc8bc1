"""Route dependencies: the engine (built once by the lifespan, kept on ``app.state``), the checked ticker and as-of
date, and an engine debating with another LLM provider."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import Depends, Query, Request
from fastapi import Path as PathParam

from equimind.engine import EquiMindEngine
from equimind.errors import NotFoundError
from equimind.interfaces.api.errors import ApiError, invalid
from equimind.interfaces.api.models import TICKER_PATTERN, IsoDate


def get_engine(request: Request) -> EquiMindEngine:
    engine: EquiMindEngine | None = getattr(request.app.state, "engine", None)
    if engine is None:
        raise RuntimeError("the API was not started: run it under uvicorn or `with TestClient(app)`")
    return engine


EngineDep = Annotated[EquiMindEngine, Depends(get_engine)]
AsOf = Annotated[IsoDate | None, Query(description="Nothing dated after this day (YYYY-MM-DD) is used. "
                                                    "Default: today.")]


def checked_ticker(engine: EquiMindEngine, raw: str) -> str:
    """The normalised ticker (``EquiMindEngine.known_ticker``), or a 404 naming the tickers that do have data."""
    try:
        return engine.known_ticker(raw)
    except NotFoundError as exc:
        stored = ", ".join(engine.stored_tickers()) or "none yet"
        raise ApiError(404, str(exc), f"tickers with stored documents: {stored}; add one with "
                                      "`equimind ingest --tickers SYMBOL`") from exc


def path_ticker(ticker: Annotated[str, PathParam(pattern=TICKER_PATTERN, description="e.g. NVDA")],
                engine: EngineDep) -> str:
    return checked_ticker(engine, ticker)


def checked_as_of(as_of: AsOf = None) -> date | None:
    if as_of is not None and as_of > date.today():
        raise invalid(("query", "as_of"), f"as_of {as_of} is in the future; use today or an earlier date")
    return as_of


TickerDep = Annotated[str, Depends(path_ticker)]
AsOfDep = Annotated[date | None, Depends(checked_as_of)]


def engine_for(engine: EquiMindEngine, provider: str | None) -> EquiMindEngine:
    """The engine itself, or one sharing its stores and models but debating with another LLM provider."""
    if provider is None or provider == engine.settings.provider:
        return engine
    settings = engine.settings.model_copy(update={"provider": provider})
    return EquiMindEngine(engine.services.with_settings(settings))
