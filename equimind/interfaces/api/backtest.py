"""REST routes of the walk-forward backtester (an ``APIRouter`` that ``create_app`` includes).

``POST /api/v1/backtest`` runs a backtest synchronously on the server's thread pool and returns the BacktestReport
(a real run costs seconds per decision; the request is capped at ``MAX_DECISIONS`` decisions). The backtest shares
the engine's models (embedder, reranker, tokenizer) but uses its own research stores, so it never writes to the
store the other routes read. ``GET /api/v1/backtest/{run_id}`` returns a stored report and
``GET /api/v1/backtest/{run_id}/equity.png`` its equity-curve plot, ``…/reliability.png`` its calibration diagram;
``GET /api/v1/backtest`` lists the stored runs. A report's ``trace`` is the server's (settings and
the serving store's documents): the per-decision stores of a run are rebuilt from the snapshot and not signed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel

from equimind.app.engine import EquiMindEngine
from equimind.backtest.models import BacktestReport, BacktestRequest
from equimind.backtest.plot import plot_reliability
from equimind.backtest.runner import Backtester
from equimind.backtest.store import BacktestStore
from equimind.core.errors import NotFoundError
from equimind.interfaces.api.deps import EngineDep, RequestIdDep
from equimind.interfaces.api.models import ErrorBody
from equimind.interfaces.traced import TracedBacktestReport
from equimind.security.trace import Trace, traced

RUN_ID_PATTERN = r"^bt-[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$"

router = APIRouter(prefix="/api/v1", tags=["backtest"])

_ERRORS: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorBody, "description": "No recorded prices for a ticker at the start, or an unknown run."},
}


RunId = Annotated[str, PathParam(pattern=RUN_ID_PATTERN, description="e.g. bt-20250901-120000-a1b2c3")]


@router.post("/backtest", responses=_ERRORS, response_model=TracedBacktestReport)
def run_backtest(body: BacktestRequest, engine: EngineDep, rid: RequestIdDep) -> Response:
    """Walk-forward backtest over the recorded corpus the server runs on (``--snapshot``): research at each decision
    day with nothing later, forward returns vs buy-and-hold and an equal-weight benchmark, hit rate, IC and
    long-short with bootstrap CIs. 422 when the server is not in snapshot mode."""
    tester = Backtester.from_services(engine.services)
    try:
        report = tester.run(body)
    finally:
        tester.store.close()
    out = traced(TracedBacktestReport, report, engine.trace(rid))
    return Response(out.model_dump_json(), media_type="application/json")


class RunSummary(BaseModel):
    """One stored backtest run (``GET /api/v1/backtest``)."""

    run_id: str
    created_at: str
    status: str
    predictions: int
    tickers: list[str]
    start: str | None
    end: str | None
    frequency: str | None


class RunList(BaseModel):
    runs: list[RunSummary]
    trace: Trace


@router.get("/backtest", response_model=RunList)
def list_backtests(engine: EngineDep, rid: RequestIdDep) -> RunList:
    """The stored backtest runs, newest first (what ``equimind backtest --list`` prints)."""
    store = BacktestStore.from_settings(engine.settings)
    try:
        runs = store.runs()
    finally:
        store.close()
    return RunList(runs=[RunSummary(run_id=r.run_id, created_at=r.created_at, status=r.status,
                                    predictions=r.n_predictions, tickers=list(r.params.get("tickers", [])),
                                    start=r.params.get("start"), end=r.params.get("end"),
                                    frequency=r.params.get("frequency")) for r in reversed(runs)],
                   trace=engine.trace(rid))


def _stored_report(engine: EquiMindEngine, run_id: str) -> BacktestReport:
    store = BacktestStore.from_settings(engine.settings)
    try:
        return store.report(run_id)
    finally:
        store.close()


@router.get("/backtest/{run_id}", responses=_ERRORS, response_model=TracedBacktestReport)
def stored_backtest(run_id: RunId, engine: EngineDep, rid: RequestIdDep) -> Response:
    """A stored backtest report (the accuracy tracker keeps every run)."""
    out = traced(TracedBacktestReport, _stored_report(engine, run_id), engine.trace(rid))
    return Response(out.model_dump_json(), media_type="application/json")


@router.get("/backtest/{run_id}/reliability.png", responses=_ERRORS, response_class=FileResponse)
def reliability_png(run_id: RunId, engine: EngineDep) -> FileResponse:
    """The run's reliability diagram: each conviction bucket's stated probability against its hit rate (PNG; drawn
    on first request for a run stored before calibration)."""
    report = _stored_report(engine, run_id)
    path = Path(report.calibration_plot_path) if report.calibration_plot_path else None
    if path is None or not path.is_file():
        path = plot_reliability(report, engine.settings.home / "backtest" / "reports" / f"{run_id}-reliability.png")
    return FileResponse(path, media_type="image/png")


@router.get("/backtest/{run_id}/equity.png", responses=_ERRORS, response_class=FileResponse)
def equity_png(run_id: RunId, engine: EngineDep) -> FileResponse:
    """The run's equity-curve plot (PNG)."""
    report = _stored_report(engine, run_id)
    if report.plot_path is None or not Path(report.plot_path).is_file():
        raise NotFoundError(f"backtest run {run_id} has no plot file (it was moved or never drawn)")
    return FileResponse(report.plot_path, media_type="image/png")
