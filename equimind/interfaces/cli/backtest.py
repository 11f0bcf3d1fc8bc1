"""``equimind backtest``: walk-forward backtest over a recorded corpus (a thin adapter over ``Backtester``)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated

import typer

from equimind.core.errors import ConfigError
from equimind.interfaces.cli import render
from equimind.interfaces.cli.app import (
    HomeOpt,
    JsonOpt,
    SnapshotOpt,
    app,
    build_settings,
    emit_json,
    parse_day,
    run_guarded,
    split_csv,
)

if TYPE_CHECKING:
    from equimind.backtest.models import BacktestReport, BacktestRequest
    from equimind.core.config import Settings


@app.command()
def backtest(
    tickers: Annotated[str | None, typer.Option("--tickers", help="Universe, comma-separated, e.g. "
                                                "AAPL,NVDA,TSLA.")] = None,
    start: Annotated[str | None, typer.Option("--start", help="First decision day, YYYY-MM-DD.")] = None,
    end: Annotated[str | None, typer.Option("--end", help="Last possible decision day, YYYY-MM-DD.")] = None,
    frequency: Annotated[str, typer.Option("--frequency", help="weekly | monthly | quarterly.")] = "monthly",
    horizons: Annotated[str, typer.Option("--horizons", help="Forward horizons in months, e.g. 1,3,6.")] = "1,3,6",
    question: Annotated[str | None, typer.Option("--question", help="Question template with {ticker} and "
                                                 "{company}.")] = None,
    prime_figures: Annotated[bool, typer.Option("--prime-figures/--no-prime-figures", help="Give every decision "
                                                "its market figures as of its day.")] = True,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples per CI.")] = 10_000,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the PNG, Markdown and JSON report "
                                             "(default: HOME/backtest/reports).")] = None,
    keep_stores: Annotated[bool, typer.Option("--keep-stores", help="Keep each ticker's research store.")] = False,
    show: Annotated[str | None, typer.Option("--show", help="Print a stored run's report (run id) and exit.")] = None,
    list_runs: Annotated[bool, typer.Option("--list", help="List stored backtest runs and exit.")] = False,
    snapshot: SnapshotOpt = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Walk-forward backtest: research each ticker at each decision day (nothing later is used), score forward
    returns vs buy-and-hold and an equal-weight benchmark; hit rate, IC and long-short with bootstrap CIs."""

    def body() -> None:
        if list_runs or show:
            _stored(home, show, as_json)
            return
        request = _request(tickers, start, end, frequency, horizons, question, prime_figures, resamples)
        settings = build_settings(home, snapshot)
        report = _run(settings, request, out, keep_stores, as_json)
        if as_json:
            emit_json(report, settings)
        else:
            _render(report)

    run_guarded(body)


def _harness() -> ModuleType:
    """``equimind.backtest.harness``, imported on first use: numpy and the engine stay out of ``--help``."""
    from equimind.backtest import harness

    return harness


def _request(tickers: str | None, start: str | None, end: str | None, frequency: str, horizons: str,
             question: str | None, prime_figures: bool, resamples: int) -> BacktestRequest:
    from pydantic import ValidationError

    Request = _harness().BacktestRequest
    universe = split_csv(tickers)
    if not universe or start is None or end is None:
        raise ConfigError("give --tickers, --start and --end, e.g. --tickers AAPL,NVDA --start 2025-02-01 "
                          "--end 2025-08-31")
    try:
        hs = [int(h) for h in horizons.split(",") if h.strip()]
    except ValueError as exc:
        raise ConfigError(f"--horizons {horizons!r}: use whole months, e.g. 1,3,6") from exc
    values = {"tickers": list(universe), "start": parse_day(start, "--start"), "end": parse_day(end, "--end"),
              "frequency": frequency, "horizons": hs, "prime_figures": prime_figures, "n_resamples": resamples}
    if question is not None:
        values["question"] = question
    try:
        request: BacktestRequest = Request.model_validate(values)
    except ValidationError as exc:
        msgs = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid backtest: {msgs}") from exc
    return request


def _run(settings: Settings, request: BacktestRequest, out: Path | None, keep_stores: bool,
         quiet: bool) -> BacktestReport:
    tester = _harness().Backtester(settings, out_dir=out, keep_stores=keep_stores)
    n = len(request.schedule()) * len(request.tickers)
    if not quiet:
        render.err_console.print(f"[bold]Backtest[/bold] {n} decisions ({len(request.schedule())} days x "
                          f"{len(request.tickers)} tickers); the first decision per ticker ingests its filings")
    try:
        report: BacktestReport = tester.run(request, on_progress=None if quiet else render.err_console.print)
        return report
    finally:
        tester.store.close()


def _stored(home: Path | None, run_id: str | None, as_json: bool) -> None:
    bt = _harness()
    settings = build_settings(home)
    store = bt.BacktestStore.from_settings(settings)
    try:
        if run_id:
            report = store.report(run_id)
            emit_json(report, settings) if as_json else _render(report)
            return
        runs = store.runs()
    finally:
        store.close()
    if as_json:
        emit_json([{"run_id": r.run_id, "created_at": r.created_at, "status": r.status,
                    "predictions": r.n_predictions, "params": r.params} for r in runs], settings)
        return
    for r in runs:
        typer.echo(f"{r.run_id}  {r.status:<7} {r.n_predictions:>3} predictions  {r.created_at}  "
                   f"{','.join(r.params.get('tickers', []))} {r.params.get('start')}..{r.params.get('end')}")


def _render(report: BacktestReport) -> None:
    from rich import box
    from rich.table import Table

    bt = _harness()
    ACCURACY_HEADER, RETURNS_HEADER, accuracy_rows, return_rows = (
        bt.ACCURACY_HEADER, bt.RETURNS_HEADER, bt.accuracy_rows, bt.return_rows)
    req = report.request
    render.console.print(f"[bold]Backtest {report.run_id}[/bold]: {', '.join(req.tickers)}, {req.frequency.value} "
                  f"{req.start}..{req.end}, {report.n_rated} rated / {report.n_decisions} decisions, prices through "
                  f"{report.data_end}")
    decisions = Table(title="Decisions (forward total returns)", box=box.SIMPLE)
    for col in ("day", "ticker", "rating", "conv", "close", *(f"{h}m" for h in req.horizons)):
        decisions.add_column(col, no_wrap=True)
    for d in report.decisions:
        rets = [("n/a" if (v := d.forward_returns.get(h)) is None else f"{100 * v:+.1f}%") for h in req.horizons]
        decisions.add_row(str(d.decided_at), d.ticker, d.rating.value if d.rating else "REFUSED",
                          f"{d.conviction:.2f}", f"{d.close:.2f}", *rets)
    render.console.print(decisions)
    for title, header, rows in (("Accuracy (95% percentile-bootstrap CIs)", ACCURACY_HEADER,
                                 accuracy_rows(report.table)),
                                ("Returns (means over scored decisions)", RETURNS_HEADER,
                                 return_rows(report.table))):
        table = Table(title=title, box=box.SIMPLE)
        for col in header:
            table.add_column(col)
        for row in rows:
            table.add_row(*row)
        render.console.print(table)
    if report.calibration:
        table = Table(title="Calibration: is a higher conviction right more often? (95% Wilson CIs)", box=box.SIMPLE)
        for col in bt.CALIBRATION_HEADER:
            table.add_column(col)
        for row in bt.calibration_rows(report):
            table.add_row(*row)
        render.console.print(table)
        for line in bt.calibration_lines(report):
            render.console.print(f"- {line}")
    for c in report.caveats:
        render.console.print(f"- {c}")
    if report.calibration_plot_path:
        render.console.print(f"reliability plot: {report.calibration_plot_path}")
    render.console.print(f"equity curve: {report.plot_path}\nreport: {report.report_path}\n"
                         f"timings (s): {report.timings_s}")
