"""CLI commands over the engine: research, market, memory, verify-citation, preflight, audit verify, serve, mcp."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from equimind.config import Settings
from equimind.interfaces.cli import (
    HomeOpt,
    JsonOpt,
    SnapshotOpt,
    app,
    audit_app,
    build_settings,
    emit_json,
    parse_day,
    run_guarded,
)

if TYPE_CHECKING:
    from equimind.engine import EquiMindEngine

AsOfOpt = Annotated[str | None, typer.Option("--as-of", help="Decide as of YYYY-MM-DD (nothing later is used).")]


def _engine(settings: Settings) -> EquiMindEngine:
    from equimind.engine import EquiMindEngine
    from equimind.services import open_services

    return EquiMindEngine(open_services(settings))


@app.command()
def research(
    ticker: Annotated[str, typer.Argument(help="Ticker, e.g. NVDA.")],
    question: Annotated[str, typer.Argument(help="Your question, e.g. \"Should I invest in NVIDIA?\"")],
    as_of: AsOfOpt = None,
    snapshot: SnapshotOpt = None,
    provider: Annotated[str | None, typer.Option("--provider", help="offline | openai | anthropic | gemini | "
                                                 "deepseek | ollama | openrouter | openai-compatible")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model name for the provider.")] = None,
    rounds: Annotated[int | None, typer.Option("--rounds", help="Bull/Bear rebuttal rounds (0-5).")] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Research a ticker: DB-first retrieval, critic, on-demand fetch, Bull/Bear/Judge debate, cited rating."""

    def body() -> None:
        from equimind.interfaces import render_report

        settings = build_settings(home, snapshot, provider=provider, model=model, debate_rounds=rounds)
        engine = _engine(settings)
        events = None if as_json else render_report.progress_printer()
        rec = engine.research(ticker, question, parse_day(as_of, "--as-of"), on_event=events)
        if as_json:
            emit_json(rec)
        else:
            render_report.recommendation(rec)

    run_guarded(body)


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
        from datetime import date

        from equimind.interfaces import render_report
        from equimind.market import market_report

        settings = build_settings(home, snapshot)
        report = market_report(settings, ticker, parse_day(as_of, "--as-of") or date.today())
        if as_json:
            emit_json(report)
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
        from equimind.memory.store import MemoryStore

        snap = MemoryStore.from_settings(build_settings(home)).snapshot(ticker.upper(),
                                                                        as_of=parse_day(as_of, "--as-of"))
        if as_json:
            emit_json(snap)
        else:
            from equimind.interfaces import render_report

            render_report.memory(snap)

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
        from equimind.citations import verify_citation as verify
        from equimind.store.docstore import DocStore

        settings = build_settings(home)
        check = verify(DocStore(settings.docstore_path), doc_id, quote)
        payload = {"doc_id": check.doc_id, "verified": check.verified, "match": check.match.value,
                   "start": check.start, "end": check.end, "similarity": round(check.similarity, 4),
                   "passage": check.passage, "doc_sha256": check.doc_sha256}
        if as_json:
            emit_json(payload)
        else:
            from equimind.interfaces.render import console

            state = "[green]verified[/green]" if check.verified else "[red]NOT verified[/red]"
            console.print(f"{state} ({check.match.value}, similarity {check.similarity:.3f}) "
                          f"chars {check.start}-{check.end}")
            if check.passage:
                console.print(check.passage)
        if not check.verified:
            raise typer.Exit(1)

    run_guarded(body)


@app.command()
def preflight(home: HomeOpt = None) -> None:
    """Exit 0 when the live sources can be used (SEC identity set and SEC reachable); else print why, exit 1."""

    def body() -> None:
        from equimind.sources.sec_edgar import SecEdgarClient

        settings = build_settings(home)
        client = SecEdgarClient(settings)  # raises ConfigError without EQUIMIND_SEC_IDENTITY
        try:
            client.resolve("AAPL")
        finally:
            client.close()
        typer.echo("live sources reachable")

    try:
        run_guarded(body)
    except typer.Exit as exc:
        raise typer.Exit(1) from exc


@audit_app.command("verify")
def audit_verify(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """Verify the audit log's hash chain, HMACs and tip; exit 1 on any problem."""

    def body() -> None:
        from equimind.security.verify import verify_audit_log

        settings = build_settings(home)
        key = settings.audit_key
        report = verify_audit_log(settings.audit_path, key)
        if as_json:
            emit_json(report)
        else:
            from equimind.interfaces.render import console

            console.print(f"{'OK' if report.ok else 'TAMPERED'}: {report.records} records, last seq "
                          f"{report.last_seq}")
            for p in report.problems:
                console.print(f"  [red]{p.kind.value}[/red] seq {p.seq} line {p.line}: {p.detail}")
        if not report.ok:
            raise typer.Exit(1)

    run_guarded(body)


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8000,
    snapshot: SnapshotOpt = None,
    home: HomeOpt = None,
) -> None:
    """Serve the REST API, the SSE stream and the web dashboard."""

    def body() -> None:
        from equimind.interfaces.api import run_server

        run_server(build_settings(home, snapshot), host=host, port=port)

    run_guarded(body)


@app.command()
def mcp(snapshot: SnapshotOpt = None, home: HomeOpt = None) -> None:
    """Run the MCP server on stdio (every tool call passes the gate and the audit log)."""

    def body() -> None:
        from equimind.interfaces.mcp_server import run_stdio

        run_stdio(build_settings(home, snapshot))

    run_guarded(body)
