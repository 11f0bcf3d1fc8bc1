"""How errors become HTTP responses: ONE table from exception class to status, used by the route error handler and
by the research stream's ``error`` events alike.

Request validation → 422 with one message per field; ``ConfigError`` / ``InsufficientEvidence`` → 422 in the same
shape; ``NotFoundError`` (unknown ticker, document, price data) → 404 with a hint; ``SourceError`` → 503
(``RateLimitedError`` adds ``Retry-After``); ``ParseError`` → 502 (a source sent a document we cannot parse: the
upstream's fault, not ours); anything else → 500 without internals (the traceback goes to the server log).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from equimind.core.errors import (
    ConfigError,
    InsufficientEvidence,
    NotFoundError,
    ParseError,
    RateLimitedError,
    SourceError,
    StoreUnavailable,
)
from equimind.interfaces.api.models import ErrorBody
from equimind.security.trace import new_request_id

log = logging.getLogger(__name__)

INTERNAL = "internal error; the server log has the details"

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "Unknown ticker, document or data; the hint says what exists."},
    503: {"model": ErrorBody, "description": "A live data source is unreachable; retry or use --snapshot."},
}
BODY_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "The request body is not valid JSON."}, **ERRORS}


class ApiError(Exception):
    """An error with its HTTP status and a hint for the caller (raised by routes, rendered as ErrorBody)."""

    def __init__(self, status: int, detail: str, hint: str | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.hint = status, detail, hint


@dataclass(frozen=True)
class ErrorStatus:
    """What one exception class becomes: the status, a hint for the caller, and for a 422 the error ``type``
    (rendered in the request-validation shape) or extra headers."""

    status: int
    hint: str | None = None
    kind: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


STATUS_TABLE: dict[type[Exception], ErrorStatus] = {
    NotFoundError: ErrorStatus(404, "GET /api/v1/health shows what is stored; POST /api/v1/search finds documents"),
    InsufficientEvidence: ErrorStatus(422, kind="insufficient_evidence"),
    ConfigError: ErrorStatus(422, kind="value_error"),
    RateLimitedError: ErrorStatus(503, "the source is rate-limiting us; retry later", headers=(("Retry-After", "60"),)),
    SourceError: ErrorStatus(503, "a live source is unreachable; retry, or serve with --snapshot"),
    StoreUnavailable: ErrorStatus(503, "a shared store is unreachable; retry shortly (the server reconnects by itself)",
                                  headers=(("Retry-After", "5"),)),
    ParseError: ErrorStatus(502, "a source returned a document that could not be parsed"),
}


def status_for(exc: BaseException) -> ErrorStatus | None:
    """The table's entry for the most specific class of ``exc`` (RateLimitedError before SourceError), or None."""
    for cls in type(exc).__mro__:
        if cls in STATUS_TABLE:
            return STATUS_TABLE[cls]
    return None


def invalid(loc: tuple[str, ...], msg: str) -> RequestValidationError:
    return RequestValidationError([{"loc": loc, "msg": msg, "type": "value_error"}])


def error_response(status: int, detail: str, hint: str | None = None,
                   headers: dict[str, str] | None = None, trace: dict[str, Any] | None = None) -> JSONResponse:
    body = ErrorBody(detail=detail, hint=hint).model_dump(exclude={"trace"})
    if trace is not None:
        body["trace"] = trace
    return JSONResponse(body, status_code=status, headers=headers)


def _as_422(kind: str, msg: str, trace: dict[str, Any] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"detail": [{"loc": ["request"], "msg": msg, "type": kind}]}
    if trace is not None:
        body["trace"] = trace
    return JSONResponse(body, status_code=422)


def error_trace(request: Request) -> dict[str, Any] | None:
    """The ``trace`` an error body carries, as every result body does (request id = the X-Request-ID header); None
    when the app has no engine (not started) or the trace cannot be read (the store is down: the error says so)."""
    app = request.scope.get("app")
    engine = getattr(getattr(app, "state", None), "engine", None)
    if engine is None:
        return None
    try:
        rid = getattr(request.state, "request_id", None) or new_request_id()  # deps.RequestIdMiddleware's id
        trace: dict[str, Any] = engine.trace(rid).model_dump()
    except Exception as exc:  # the error being answered matters more than its trace
        log.info("no trace for the error on %s: %s", request.url.path, exc)
        return None
    return trace


async def on_error(request: Request, exc: Exception) -> Response:
    """One handler for every EquiMind error; the exception's class decides the status (``STATUS_TABLE``)."""
    trace = error_trace(request)
    if isinstance(exc, ApiError):
        return error_response(exc.status, exc.detail, exc.hint, trace=trace)
    entry = status_for(exc)
    if entry is None:
        log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, INTERNAL, trace=trace)
    if entry.kind is not None:
        return _as_422(entry.kind, str(exc), trace)
    return error_response(entry.status, str(exc), entry.hint, dict(entry.headers) or None, trace)


async def on_validation_error(request: Request, exc: Exception) -> Response:
    """A request that fails validation: FastAPI's 422 body (one message per field), with the ``trace``."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else [{"msg": str(exc)}]
    body: dict[str, Any] = {"detail": jsonable_encoder(errors)}
    trace = error_trace(request)
    if trace is not None:
        body["trace"] = trace
    return JSONResponse(body, status_code=422)


def stream_error(exc: Exception) -> dict[str, Any]:
    """The ``data`` of a research stream's ``error`` event: the same status the route handler would answer."""
    entry = status_for(exc)
    if entry is None:
        log.exception("research stream failed", exc_info=exc)
        return {"status": 500, "detail": INTERNAL}
    return {"status": entry.status, "detail": str(exc)}
