"""The app factory: ``create_app(settings, services=None)`` includes one router per resource (``system``,
``evidence``, ``market``, ``memory``, ``changes``, ``research``, ``backtest``), the error handler (``errors``) and
the dashboard.

The engine is built once, at startup (the lifespan), and kept on ``app.state``; routes receive it with
``Annotated[EquiMindEngine, Depends(get_engine)]`` (``deps``). Route handlers hold no state of their own: the stores
behind the engine are safe for concurrent readers while an ingest writes (SQLite WAL with a connection per thread,
index refreshes under a lock). Synchronous routes run on FastAPI's thread pool. Errors: see ``errors``.

Every response has an ``X-Request-ID`` header (``deps.RequestIdMiddleware``); every JSON result body carries a
``trace`` (request id = that header, version, corpus signature, config hash: ``equimind.security.trace``), a list as
``{"documents": [...], "count", "total", "trace"}``, a stream in its final ``recommendation`` / ``answer`` event.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import SecretStr

from equimind import __version__
from equimind.app.engine import EquiMindEngine
from equimind.app.services import Services, open_services
from equimind.core.config import Settings
from equimind.core.errors import ConfigError, EquiMindError
from equimind.interfaces.api import backtest, changes, evidence, market, memory, research, system
from equimind.interfaces.api.deps import RequestIdMiddleware
from equimind.interfaces.api.errors import ApiError, on_error, on_validation_error

log = logging.getLogger(__name__)

API = "/api/v1"
SERVE_SETTINGS_ENV = "EQUIMIND_SERVE_SETTINGS"  # the parent's Settings as JSON, for `serve --workers N` workers
APP_FACTORY = "equimind.interfaces.api.app:create_app_from_env"
WEB_DIR = Path(__file__).resolve().parent.parent / "web"
_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def create_app(settings: Settings, services: Services | None = None) -> FastAPI:
    """The API + dashboard. ``services`` (tests inject fakes) defaults to ``open_services(settings)`` at startup."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = services is None
        svc = services if services is not None else await run_in_threadpool(_open_and_warm, settings)
        # One searcher (and so one set of local indexes) for every request: built lazily, concurrent first
        # requests would each build their own and race on the index files.
        await run_in_threadpool(svc.searcher)
        app.state.engine = EquiMindEngine(svc, background_indexing=True)
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
    app.add_middleware(RequestIdMiddleware)
    for exc_type in (EquiMindError, ApiError, Exception):
        app.add_exception_handler(exc_type, on_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    for router in (system.router, evidence.router, market.router, memory.router, changes.router, research.router,
                   backtest.router):
        app.include_router(router)
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


def run_server(settings: Settings, host: str = "127.0.0.1", port: int = 8000, *, workers: int = 1,
               torch_threads: int = 1) -> None:
    """What ``equimind serve`` runs: the API and dashboard under uvicorn (blocks until interrupted). The embedder
    runs ``torch_threads`` intra-op threads (torch or ONNX Runtime) unless ``settings.embed_threads`` says otherwise.

    ``workers`` > 1: that many uvicorn worker processes on one socket, each with its own engine over the same stores
    (``check_workers``: only with a Chroma server). Workers are spawned, not forked, so each rebuilds these settings
    from ``SERVE_SETTINGS_ENV`` (``create_app_from_env``)."""
    import uvicorn

    check_workers(workers, settings.chroma_url)
    if settings.embed_threads is None:
        settings = settings.model_copy(update={"embed_threads": torch_threads})
    log.info("EquiMind API on http://%s:%d (dashboard at /, docs at %s/docs)", host, port, API)
    if workers == 1:
        uvicorn.run(create_app(settings), host=host, port=port, log_level="info")
        return
    encoded = settings_to_json(settings)
    # Fail here, once, with the error's own message: with workers, uvicorn reports a worker that failed to start
    # only in its log and the parent then exits 0.
    settings_from_env({SERVE_SETTINGS_ENV: encoded})
    open_services(settings).docstore.close()  # the home is usable and the Chroma server answers
    previous = os.environ.get(SERVE_SETTINGS_ENV)
    os.environ[SERVE_SETTINGS_ENV] = encoded  # spawned workers (and their replacements) inherit the environment
    try:
        uvicorn.run(APP_FACTORY, factory=True, workers=workers, host=host, port=port, log_level="info")
    finally:
        if previous is None:
            os.environ.pop(SERVE_SETTINGS_ENV, None)
        else:
            os.environ[SERVE_SETTINGS_ENV] = previous


def check_workers(workers: int, chroma_url: str | None) -> None:
    """Raise ConfigError unless ``workers`` API processes can share the stores: at least 1, and more than 1 only with
    a Chroma server (embedded Chroma is single-process: docs/scaling.md)."""
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, not {workers}")
    if workers > 1 and not chroma_url:
        raise ConfigError(
            f"--workers {workers} needs a Chroma server: the embedded Chroma (EQUIMIND_CHROMA_URL unset) is "
            "single-process, so a worker would not see vectors another worker writes. Start a server with "
            "`scripts/chroma_server.sh start` and set EQUIMIND_CHROMA_URL to the URL it prints, or serve with "
            "--workers 1")


def settings_to_json(settings: Settings) -> str:
    """``settings`` as JSON that ``settings_from_env`` turns back into equal Settings (secrets included: the workers
    need the provider keys; the value lives only in the server's own environment, as those keys already do)."""
    values = settings.model_dump(mode="json")
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            values[name] = value.get_secret_value()
    return json.dumps(values)


def settings_from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """The Settings a ``serve --workers N`` parent put in ``SERVE_SETTINGS_ENV``; ConfigError when missing or
    invalid. Every field is in the JSON, so the worker's own environment overrides nothing."""
    raw = (os.environ if environ is None else environ).get(SERVE_SETTINGS_ENV)
    if not raw:
        raise ConfigError(f"{SERVE_SETTINGS_ENV} is not set: create_app_from_env serves the settings of an "
                          "`equimind serve --workers N` parent; start the server with that command")
    try:
        values = json.loads(raw)
        if not isinstance(values, dict):
            raise ValueError(f"expected a JSON object, got {type(values).__name__}")
        return Settings(**values)
    except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError are ValueErrors
        raise ConfigError(f"{SERVE_SETTINGS_ENV} does not hold valid settings: {exc}") from exc


def create_app_from_env() -> FastAPI:
    """The app factory each ``serve --workers N`` worker runs (uvicorn ``factory=True``): ``create_app`` over the
    parent's Settings, read from ``SERVE_SETTINGS_ENV``."""
    return create_app(settings_from_env())


def _open_and_warm(settings: Settings) -> Services:
    """Open the stores and load the models once, so the first request does not pay for it."""
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
