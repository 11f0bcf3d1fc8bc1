"""Read paths: ``market``, ``memory``, ``ledger`` and ``verify-citation`` (nothing is written)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

import typer

from equimind.interfaces.cli import render, render_ledger, render_report
from equimind.interfaces.cli.app import (
    AsOfOpt,
    HomeOpt,
    JsonOpt,
    SnapshotOpt,
    app,
    build_settings,
    emit_json,
    parse_day,
    run_guarded,
)


@app.command()
def market(
    ticker: Annotated[str, typer.Argument(help="Ticker, e.g. NVDA.")],
    as_of: AsOfOpt = None,
    snapshot: SnapshotOpt = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Last close, indicators and fundamentals (each with provenance) as of a date."""

    def body() -> None:
        from equimind.analytics.market import report_for

        settings = build_settings(home, snapshot)  # the market report needs no store: no Services (no Chroma)
        report = report_for(settings, ticker, parse_day(as_of, "--as-of") or date.today())
        if as_json:
            emit_json(report, settings)
        else:
            render_report.market(report)

    run_guarded(body)


@app.command()
def memory(
    ticker: Annotated[str, typer.Argument(help="Ticker, e.g. NVDA.")],
    as_of: AsOfOpt = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What EquiMind remembers about a ticker: evidence, period summaries and past research runs."""

    def body() -> None:
        from equimind.memory.store import MemoryStore  # pydantic models and SQLite: kept out of `--help`

        settings = build_settings(home)
        snap = MemoryStore.from_settings(settings).snapshot(ticker.upper(), as_of=parse_day(as_of, "--as-of"))
        if as_json:
            emit_json(snap, settings)
        else:
            render_report.memory(snap)

    run_guarded(body)


@app.command()
def ledger(
    ticker: Annotated[str, typer.Argument(help="Ticker, e.g. NVDA.")],
    as_of: AsOfOpt = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The rating ledger: every rated research run on a ticker (as-of date, rating, conviction, evidence and figures
    used) and what changed from the run before; with --as-of, nothing dated after it."""

    def body() -> None:
        from equimind.memory.store import MemoryStore  # pydantic models and SQLite: kept out of `--help`

        settings = build_settings(home)
        history = MemoryStore.from_settings(settings).ledger_history(ticker, as_of=parse_day(as_of, "--as-of"))
        if as_json:
            emit_json(history, settings)
        else:
            render_ledger.history(history)

    run_guarded(body)


@app.command("verify-citation")
def verify_citation(
    doc_id: Annotated[str, typer.Argument(help="Stored document id (sha256).")],
    quote: Annotated[str, typer.Argument(help="The quoted text to find.")],
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check a quote against the stored canonical text (exact, then normalised; else the closest passage)."""

    def body() -> None:
        from equimind.core.citations import verify_citation as verify
        from equimind.store.open import open_docstore  # numpy

        settings = build_settings(home)
        check = verify(open_docstore(settings), doc_id, quote)
        payload = {"doc_id": check.doc_id, "verified": check.verified, "match": check.match.value,
                   "start": check.start, "end": check.end, "similarity": round(check.similarity, 4),
                   "passage": check.passage, "doc_sha256": check.doc_sha256}
        if as_json:
            emit_json(payload, settings)
        else:
            state = "[green]verified[/green]" if check.verified else "[red]NOT verified[/red]"
            render.console.print(f"{state} ({check.match.value}, similarity {check.similarity:.3f}) "
                                 f"chars {check.start}-{check.end}")
            if check.passage:
                render.console.print(check.passage)
        if not check.verified:
            raise typer.Exit(1)

    run_guarded(body)
