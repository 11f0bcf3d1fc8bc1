"""REST API and dashboard host: thin FastAPI routes over one ``EquiMindEngine``.

``create_app(settings, services=None)`` builds the app; the engine is built once, at startup (the lifespan), and
kept on ``app.state``; routes receive it with ``Annotated[EquiMindEngine, Depends(get_engine)]``. Route handlers hold
no state of their own: the stores behind the engine are safe for concurrent readers while an ingest writes (SQLite
WAL with a connection per thread, index refreshes under a lock). Synchronous routes run on FastAPI's thread pool.

Errors: request validation → 422 with one message per field; the engine's ``ConfigError`` → 422 in the same shape;
``NotFoundError`` (unknown ticker, document, price data) → 404 with a hint; ``SourceError`` → 503; anything else →
500 without internals (the traceback goes to the server log).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from sse_starlette import EventSourceResponse, ServerSentEvent

from equimind import __version__
from equimind.config import Settings
from equimind.engine import EquiMindEngine, Health, Passage, ResearchEvent
from equimind.errors import (
    ConfigError,
    EquiMindError,
    InsufficientEvidence,
    NotFoundError,
    ParseError,
    RateLimitedError,
    SourceError,
)
from equimind.interfaces.api_models import (
    DOC_ID_PATTERN,
    FORM_PATTERN,
    MAX_CONTEXT,
    MAX_SPAN,
    TICKER_PATTERN,
    CitationCheckOut,
    CitationRequest,
    ErrorBody,
    IsoDate,
    PriceSeries,
    ResearchRequest,
    SearchRequest,
    price_series,
)
from equimind.market import MarketReport
from equimind.memory.records import MemorySnapshot
from equimind.models import DocumentRef, FilterSpec, Recommendation, SearchResult

if TYPE_CHECKING:
    from equimind.services import Services

log = logging.getLogger(__name__)

API = "/api/v1"
WEB_DIR = Path(__file__).resolve().parent / "web"
_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "Unknown ticker, document or data; the hint says what exists."},
    503: {"model": ErrorBody, "description": "A live data source is unreachable; retry or use --snapshot."},
}
_BODY_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "The request body is not valid JSON."}, **_ERRORS}


class ApiError(Exception):
    """An error with its HTTP status and a hint for the caller (raised by routes, rendered as ErrorBody)."""

    def __init__(self, status: int, detail: str, hint: str | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.hint = status, detail, hint


# --------------------------------------------------------------------------------------------------------------
# Dependencies


def get_engine(request: Request) -> EquiMindEngine:
    engine: EquiMindEngine | None = getattr(request.app.state, "engine", None)
    if engine is None:
        raise RuntimeError("the API was not started: run it under uvicorn or `with TestClient(app)`")
    return engine


EngineDep = Annotated[EquiMindEngine, Depends(get_engine)]
AsOf = Annotated[IsoDate | None, Query(description="Nothing dated after this day (YYYY-MM-DD) is used. "
                                                    "Default: today.")]


def _invalid(loc: tuple[str, ...], msg: str) -> RequestValidationError:
    return RequestValidationError([{"loc": loc, "msg": msg, "type": "value_error"}])


def _stored_tickers(engine: EquiMindEngine) -> list[str]:
    return sorted(engine.services.docstore.known_tickers())


def checked_ticker(engine: EquiMindEngine, raw: str) -> str:
    """The normalised ticker, or a 404 naming the tickers that do have data."""
    try:
        return engine.known_ticker(raw)
    except NotFoundError as exc:
        stored = ", ".join(_stored_tickers(engine)) or "none yet"
        raise ApiError(404, str(exc), f"tickers with stored documents: {stored}; add one with "
                                      "`equimind ingest --tickers SYMBOL`") from exc


def path_ticker(ticker: Annotated[str, PathParam(pattern=TICKER_PATTERN, description="e.g. NVDA")],
                engine: EngineDep) -> str:
    return checked_ticker(engine, ticker)


def checked_as_of(as_of: AsOf = None) -> date | None:
    if as_of is not None and as_of > date.today():
        raise _invalid(("query", "as_of"), f"as_of {as_of} is in the future; use today or an earlier date")
    return as_of


TickerDep = Annotated[str, Depends(path_ticker)]
AsOfDep = Annotated[date | None, Depends(checked_as_of)]


def engine_for(engine: EquiMindEngine, provider: str | None) -> EquiMindEngine:
    """The engine itself, or one sharing its stores and models but debating with another LLM provider."""
    if provider is None or provider == engine.settings.provider:
        return engine
    services = engine.services
    _ = services.embedder, services.reranker  # materialise the shared models before copying the wiring
    settings = engine.settings.model_copy(update={"provider": provider})
    return EquiMindEngine(replace(services, settings=settings))


# --------------------------------------------------------------------------------------------------------------
# Error rendering


def _json(model: BaseModel) -> Response:
    return Response(model.model_dump_json(), media_type="application/json")


def _error(status: int, detail: str, hint: str | None = None, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(ErrorBody(detail=detail, hint=hint).model_dump(), status_code=status, headers=headers)


def _as_422(kind: str, msg: str) -> JSONResponse:
    return JSONResponse({"detail": [{"loc": ["request"], "msg": msg, "type": kind}]}, status_code=422)


async def _on_error(request: Request, exc: Exception) -> Response:
    """One handler for every EquiMind error; the exception's class decides the status."""
    if isinstance(exc, ApiError):
        return _error(exc.status, exc.detail, exc.hint)
    if isinstance(exc, NotFoundError):
        return _error(404, str(exc), "GET /api/v1/health shows what is stored; POST /api/v1/search finds documents")
    if isinstance(exc, InsufficientEvidence):
        return _as_422("insufficient_evidence", str(exc))
    if isinstance(exc, ConfigError):
        return _as_422("value_error", str(exc))
    if isinstance(exc, RateLimitedError):
        return _error(503, str(exc), "the source is rate-limiting us; retry later", {"Retry-After": "60"})
    if isinstance(exc, SourceError):
        return _error(503, str(exc), "a live source is unreachable; retry, or serve with --snapshot")
    if isinstance(exc, ParseError):
        return _error(502, str(exc), "a source returned a document that could not be parsed")
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error(500, "internal error; the server log has the details")


# --------------------------------------------------------------------------------------------------------------
# The app


def create_app(settings: Settings, services: Services | None = None) -> FastAPI:
    """The API + dashboard. ``services`` (tests inject fakes) defaults to ``open_services(settings)`` at startup."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = services is None
        svc = services if services is not None else await run_in_threadpool(_open_and_warm, settings)
        # One searcher (and so one set of local indexes) for every request: built lazily, concurrent first
        # requests would each build their own and race on the index files.
        await run_in_threadpool(svc.searcher)
        app.state.engine = EquiMindEngine(svc)
        try:
            yield
        finally:
            del app.state.engine
            if owned:
                svc.docstore.close()

    app = FastAPI(title="EquiMind", version=__version__, lifespan=lifespan, openapi_url=f"{API}/openapi.json",
                  docs_url=None, redoc_url=None,
                  description="Evidence-first equity research: hybrid search over SEC filings, market data, "
                              "and a Bull/Bear/Judge debate that ends in a cited recommendation.")
    for exc_type in (EquiMindError, ApiError, Exception):
        app.add_exception_handler(exc_type, _on_error)
    _add_routes(app)
    from equimind.interfaces.api_backtest import router as backtest_router

    app.include_router(backtest_router)
    _add_pages(app)
    return app


def limit_torch_threads(n: int = 1) -> None:
    """One intra-op thread per request: the server parallelises across requests, and torch's default (one thread
    per core) on top of that oversubscribes the cores (measured here: 13 ms vs 480 ms per query embedding when
    another process keeps a core busy). A no-op when torch is not installed."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(n)


def run_server(settings: Settings, host: str = "127.0.0.1", port: int = 8000, *, torch_threads: int = 1) -> None:
    """What ``equimind serve`` runs: the API and dashboard under uvicorn (blocks until interrupted)."""
    import uvicorn

    limit_torch_threads(torch_threads)
    log.info("EquiMind API on http://%s:%d (dashboard at /, docs at %s/docs)", host, port, API)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


def _open_and_warm(settings: Settings) -> Services:
    """Open the stores and load the models once, so the first request does not pay for it."""
    from equimind.services import open_services

    svc = open_services(settings)
    try:
        _ = svc.embedder, svc.reranker.available
    except EquiMindError as exc:  # the health endpoint reports it; bm25 search still works
        log.warning("model warm-up failed: %s", exc)
    return svc


def _add_pages(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=WEB_DIR), name="static")

    @app.get("/", include_in_schema=False)
    def dashboard() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html", headers=_PAGE_HEADERS)

    @app.get(f"{API}/docs", include_in_schema=False)
    def api_docs() -> FileResponse:
        return FileResponse(WEB_DIR / "docs.html", headers=_PAGE_HEADERS)


def _add_routes(app: FastAPI) -> None:
    @app.get(f"{API}/health", tags=["system"])
    def health(engine: EngineDep) -> Health:
        """Component status: store counts, embedder and reranker, LLM provider, snapshot or live mode."""
        return engine.health()

    @app.post(f"{API}/search", tags=["evidence"], responses=_BODY_ERRORS, response_model=SearchResult)
    def search(body: SearchRequest, engine: EngineDep) -> Response:
        """Hybrid search (filter → dense + BM25 → RRF → rerank): top passages with their parents and scores."""
        flt = body.to_filter()
        if flt.tickers:
            stored = set(_stored_tickers(engine))
            unknown = [t for t in flt.tickers if t not in stored]
            if unknown:
                raise ApiError(404, f"no stored documents for ticker(s) {', '.join(unknown)}",
                               f"tickers with stored documents: {', '.join(sorted(stored)) or 'none yet'}")
        result = engine.search(body.query, flt, mode=body.mode, top_k=body.top_k, auto_filter=body.auto_filter)
        return _json(result)  # already a validated SearchResult: serialise once, skip re-validation

    @app.get(f"{API}/documents", tags=["evidence"])
    def documents(engine: EngineDep,
                  ticker: Annotated[str | None, Query(pattern=TICKER_PATTERN)] = None,
                  form: Annotated[str | None, Query(pattern=FORM_PATTERN)] = None) -> list[DocumentRef]:
        """Indexed documents (metadata only, newest first), optionally for one ticker and form."""
        flt = FilterSpec(tickers=(ticker.upper(),) if ticker else (), forms=(form.upper(),) if form else ())
        return engine.services.docstore.list_documents(flt, status="indexed")

    @app.get(f"{API}/documents/{{doc_id}}", tags=["evidence"], responses=_ERRORS)
    def document_span(engine: EngineDep, doc_id: Annotated[str, PathParam(pattern=DOC_ID_PATTERN)],
                      start: Annotated[int, Query(ge=0, le=100_000_000)],
                      end: Annotated[int, Query(ge=1, le=100_000_000)],
                      context: Annotated[int, Query(ge=0, le=MAX_CONTEXT)] = 400) -> Passage:
        """A cited span [start, end) of a document's canonical text, with ``context`` characters either side."""
        if end <= start:
            raise _invalid(("query", "end"), f"end ({end}) must be greater than start ({start})")
        if end - start > MAX_SPAN:
            raise _invalid(("query", "end"), f"the span may be at most {MAX_SPAN} characters, got {end - start}")
        return engine.passage(doc_id, start, end, context=context)

    @app.post(f"{API}/citations/verify", tags=["evidence"], responses=_BODY_ERRORS)
    def verify_citation(body: CitationRequest, engine: EngineDep) -> CitationCheckOut:
        """Find a quote in a document (exact, then whitespace/case-normalised; no LLM)."""
        return CitationCheckOut.of(engine.verify_citation(body.doc_id, body.quote))

    @app.get(f"{API}/market/{{ticker}}", tags=["market"], responses=_ERRORS)
    def market(ticker: TickerDep, engine: EngineDep, as_of: AsOfDep = None) -> MarketReport:
        """Last close, indicators, fundamentals, sentiment and macro as of a date, each figure with provenance."""
        return engine.market(ticker, as_of)

    @app.get(f"{API}/market/{{ticker}}/series", tags=["market"], responses=_ERRORS)
    def market_series(ticker: TickerDep, engine: EngineDep, as_of: AsOfDep = None,
                      lookback_days: Annotated[int, Query(ge=20, le=1825)] = 365) -> PriceSeries:
        """Daily OHLCV with SMA, Bollinger, RSI and MACD series up to the as-of date (what the chart draws)."""
        return price_series(engine.settings, ticker, as_of or date.today(), lookback_days)

    @app.get(f"{API}/memory/{{ticker}}", tags=["research"], responses=_ERRORS)
    def memory(ticker: TickerDep, engine: EngineDep, as_of: AsOfDep = None) -> MemorySnapshot:
        """What EquiMind remembers about a ticker: dated evidence, period summaries, past research runs."""
        return engine.memory(ticker, as_of)

    @app.post(f"{API}/research", tags=["research"], responses=_BODY_ERRORS)
    def research(body: ResearchRequest, engine: EngineDep) -> Recommendation:
        """The full run: agentic retrieval, compression, Bull/Bear/Judge debate, cited recommendation."""
        ticker = checked_ticker(engine, body.ticker)
        return engine_for(engine, body.provider).research(ticker, body.question, body.as_of)

    @app.post(f"{API}/research/stream", tags=["research"], response_class=EventSourceResponse,
              responses={**_BODY_ERRORS, 200: {"content": {"text/event-stream": {}}, "description": _STREAM_DOC}})
    async def research_stream(body: ResearchRequest, engine: EngineDep) -> EventSourceResponse:
        """The research run as Server-Sent Events: one ``stage`` event per stage and iteration, then the
        ``recommendation`` (or an ``error`` event)."""
        ticker = await run_in_threadpool(checked_ticker, engine, body.ticker)
        runner = engine_for(engine, body.provider)
        return EventSourceResponse(_research_events(runner, ticker, body), ping=15)


_STREAM_DOC = ("text/event-stream. `event: stage` — data is a ResearchEvent {stage, iteration, message, data}; "
               "`event: recommendation` — data is the Recommendation; `event: error` — data is {status, detail}.")


async def _research_events(engine: EquiMindEngine, ticker: str, body: ResearchRequest
                           ) -> AsyncIterator[ServerSentEvent]:
    """Runs the (synchronous) research in a worker thread and relays its events as they happen."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[ServerSentEvent | None] = asyncio.Queue()

    def put(item: ServerSentEvent | None) -> None:
        with contextlib.suppress(RuntimeError):  # RuntimeError: the loop is closed (server shutting down)
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def on_event(event: ResearchEvent) -> None:
        put(ServerSentEvent(data=event.model_dump_json(), event="stage"))

    def work() -> None:
        try:
            rec = engine.research(ticker, body.question, body.as_of, on_event=on_event)
            put(ServerSentEvent(data=rec.model_dump_json(), event="recommendation"))
        except Exception as exc:
            put(ServerSentEvent(data=json.dumps(_stream_error(exc)), event="error"))
        finally:
            put(None)

    worker = asyncio.ensure_future(run_in_threadpool(work))
    try:
        while (item := await queue.get()) is not None:
            yield item
    finally:
        if not worker.done():
            log.info("research stream for %s closed by the client; the run finishes in the background", ticker)


def _stream_error(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, NotFoundError):
        return {"status": 404, "detail": str(exc)}
    if isinstance(exc, ConfigError):
        return {"status": 422, "detail": str(exc)}
    if isinstance(exc, SourceError):
        return {"status": 503, "detail": str(exc)}
    log.exception("research stream failed", exc_info=exc)
    return {"status": 500, "detail": "internal error; the server log has the details"}
