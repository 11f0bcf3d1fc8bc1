"""Route dependencies: the engine (built once by the lifespan, kept on ``app.state``), the request id (set by
``RequestIdMiddleware``, sent back as the ``X-Request-ID`` header and the body's ``trace.request_id``), the checked
ticker and as-of date, and an engine debating with another LLM provider."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi import Path as PathParam
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from equimind.app.engine import EquiMindEngine
from equimind.core.errors import NotFoundError
from equimind.interfaces.api.errors import ApiError, invalid
from equimind.interfaces.api.models import TICKER_PATTERN, IsoDate
from equimind.security.trace import new_request_id

REQUEST_ID_HEADER = "X-Request-ID"


class RequestIdMiddleware:
    """Gives every HTTP request a fresh uuid4-hex id (``request.state.request_id``) and answers it in the
    ``X-Request-ID`` header, errors and streams included. Pure ASGI, so Server-Sent Events stream unbuffered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = new_request_id()
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = rid

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (REQUEST_ID_HEADER.lower().encode(), rid.encode())]
            await send(message)

        await self.app(scope, receive, send_with_id)


def request_id(request: Request) -> str:
    rid: str | None = getattr(request.state, "request_id", None)
    return rid or new_request_id()  # an app built without the middleware still traces each response


RequestIdDep = Annotated[str, Depends(request_id)]


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
    return EquiMindEngine(engine.services.with_settings(settings), background_indexing=engine.background_indexing)
