"""``GET /api/v1/memory/{ticker}``: what EquiMind remembers about a ticker; ``GET /api/v1/ledger/{ticker}``: its
rating ledger (every rated research run and what changed from the one before); ``GET /api/v1/report/{run_id}``: the
printable report of a stored research run (self-contained HTML)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, Response

from equimind.core.errors import NotFoundError
from equimind.interfaces.api.deps import AsOfDep, EngineDep, RequestIdDep, TickerDep
from equimind.interfaces.api.errors import ERRORS, ApiError
from equimind.interfaces.report_html import html_to_pdf, report_page
from equimind.interfaces.traced import TracedLedger, TracedMemory
from equimind.security.trace import traced

router = APIRouter(prefix="/api/v1", tags=["research"])


@router.get("/memory/{ticker}", responses=ERRORS)
def memory(ticker: TickerDep, engine: EngineDep, rid: RequestIdDep, as_of: AsOfDep = None) -> TracedMemory:
    """What EquiMind remembers about a ticker: dated evidence, period summaries, past research runs."""
    return traced(TracedMemory, engine.memory(ticker, as_of), engine.trace(rid))


@router.get("/ledger/{ticker}", responses=ERRORS)
def ledger(ticker: TickerDep, engine: EngineDep, rid: RequestIdDep, as_of: AsOfDep = None) -> TracedLedger:
    """The rating ledger of a ticker: each rated research run (as-of date, rating, conviction, the evidence and
    figures it used) with what changed from the run before; none dated after ``as_of``. 404 when nothing is
    recorded yet."""
    try:
        history = engine.services.memory.ledger_history(ticker, as_of)
    except NotFoundError as exc:
        hint = f"run POST /api/v1/research for {ticker} first (or choose a later as_of)"
        raise ApiError(404, str(exc), hint) from exc
    return traced(TracedLedger, history, engine.trace(rid))


_REPORT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/html": {}}, "description": "The report as one self-contained HTML page."}, **ERRORS}


@router.get("/report/{run_id}", responses=_REPORT_RESPONSES, response_model=None)
def report(run_id: Annotated[int, PathParam(ge=1, le=10**12)], engine: EngineDep) -> HTMLResponse:
    """The printable report of a stored research run as one self-contained HTML page (print it, or
    `equimind report RUN_ID --pdf`); 404 for an unknown run or one recorded before results were stored."""
    return HTMLResponse(report_page(engine, run_id))


_PDF_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/pdf": {}}, "description": "The report printed to PDF."}, **ERRORS}


@router.get("/report/{run_id}/pdf", responses=_PDF_RESPONSES, response_model=None)
def report_pdf(run_id: Annotated[int, PathParam(ge=1, le=10**12)], engine: EngineDep) -> Response:
    """The same report printed to PDF by headless Chromium on the server (422 naming the fix without Chromium)."""
    page = report_page(engine, run_id)
    with tempfile.TemporaryDirectory(prefix="equimind-pdf-") as tmp:
        data = html_to_pdf(page, Path(tmp) / "report.pdf").read_bytes()
    return Response(data, media_type="application/pdf",
                    headers={"Content-Disposition": f'inline; filename="equimind-report-{run_id}.pdf"'})
